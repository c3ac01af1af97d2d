#!/usr/bin/env python3
"""Starts every workload of the rendered deploy/k8s overlays as local processes, with exactly the
environment and files its manifest gives it, and waits until each is ready.

Run by scripts/k8s-check.sh, which renders the overlays (`kubectl kustomize`), validates them
and prepares a RabbitMQ vhost and a database; this script is the part that acts as the kubelet:

- volumes: a ConfigMap or Secret volume becomes a folder with its keys (or `items`) as files, an
  emptyDir an empty folder; a mount (with `subPath`, a file) is that folder under a temporary
  root, and the mount path is rewritten to it wherever the container's args and env name it;
- env: `value`, `configMapKeyRef`, `secretKeyRef`, `envFrom` ConfigMaps and Secrets, nothing
  else (PATH and HOME aside); Secret values are the test's, for exactly the keys the example
  Secrets (`secret.example.yaml`) list, so a manifest that asks for another key fails here;
- network: every pod gets its own free loopback ports for its container ports and `--*-port`
  arguments, and `0.0.0.0` becomes `127.0.0.1`, in args, env and ConfigMap files alike;
- order: a pod's native sidecars (init containers with `restartPolicy: Always`) start first and
  must pass their startupProbe; other init containers run to completion in order; then the
  containers start and must pass their readinessProbe (a Job's must exit 0 instead);
- stop: SIGTERM to every process, which must exit with 0 before the pod's
  terminationGracePeriodSeconds.

Each process runs in an empty working folder, which must still be empty afterwards (the pods'
root filesystem is read-only). Everything listens and connects on 127.0.0.1 only.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

IMAGE_PATHS = {}  # absolute paths inside the image -> local paths (set from the arguments)


class CheckFailed(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Pod:
    """One workload's pod: its volumes as folders, its port map, its processes."""

    def __init__(self, name, spec, configmaps, secrets, root):
        self.name = name
        self.spec = spec
        self.configmaps = configmaps
        self.secrets = secrets
        self.root = root
        self.processes = []  # (container name, Popen, log path)
        self.volumes = {}
        containers = spec.get("initContainers", []) + spec["containers"]
        ports = set()
        for c in containers:
            ports.update(p["containerPort"] for p in c.get("ports", []))
            args = c.get("args", [])
            ports.update(int(args[i + 1]) for i, a in enumerate(args[:-1]) if re.fullmatch(r"--[a-z-]*port", a))
        self.ports = {port: free_port() for port in sorted(ports)}
        for volume in spec.get("volumes", []):
            self.volumes[volume["name"]] = self.make_volume(volume)

    def rewrite(self, text, mounts=()):
        """Mount paths, image paths, ports and 0.0.0.0 of a string, as this pod sees them."""
        for path, local in sorted(list(mounts) + list(IMAGE_PATHS.items()), key=lambda m: -len(m[0])):
            text = re.sub(re.escape(path) + r"(?=/|$|\s|,)", local, text)
        for port, local in self.ports.items():
            text = re.sub(r"(?<=:)%d\b" % port, str(local), text)
            if text == str(port):
                text = str(local)
        return text.replace("0.0.0.0", "127.0.0.1")

    def make_volume(self, volume):
        folder = os.path.join(self.root, "volumes", volume["name"])
        os.makedirs(folder)
        if "configMap" in volume:
            source, kind = volume["configMap"], "ConfigMap"
            data = self.configmaps.get(source["name"])
        elif "secret" in volume:
            source, kind = volume["secret"], "Secret"
            data = self.secrets.get(source["secretName"])
        elif "emptyDir" in volume:
            return folder
        else:
            raise CheckFailed(f"{self.name}: volume {volume['name']}: only configMap, secret and emptyDir are emulated")
        if data is None:
            raise CheckFailed(f"{self.name}: volume {volume['name']}: no {kind} named {source.get('name') or source.get('secretName')}")
        items = source.get("items") or [{"key": k, "path": k} for k in data]
        for item in items:
            if item["key"] not in data:
                raise CheckFailed(f"{self.name}: volume {volume['name']}: the {kind} has no key {item['key']}")
            content = data[item["key"]]
            if kind == "ConfigMap":
                content = self.rewrite(content)
            path = os.path.join(folder, item["path"])
            with open(path, "w") as f:
                f.write(content)
            mode = item.get("mode", source.get("defaultMode"))
            if mode is not None:
                os.chmod(path, mode)
        return folder

    def mounts(self, container):
        result = []
        for mount in container.get("volumeMounts", []):
            local = self.volumes[mount["name"]]
            if "subPath" in mount:
                local = os.path.join(local, mount["subPath"])
                if not os.path.exists(local):
                    raise CheckFailed(f"{self.name}/{container['name']}: subPath {mount['subPath']} is not in volume {mount['name']}")
            result.append((mount["mountPath"], local))
        return result

    def environment(self, container, mounts):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.path.join(self.root, "home")}
        os.makedirs(env["HOME"], exist_ok=True)

        def lookup(kind, source, key):
            store = self.configmaps if kind == "configMap" else self.secrets
            data = store.get(source["name"])
            if data is None:
                raise CheckFailed(f"{self.name}/{container['name']}: no {kind} named {source['name']}")
            if key not in data:
                raise CheckFailed(f"{self.name}/{container['name']}: {kind} {source['name']} has no key {key}")
            return data[key]

        for source in container.get("envFrom", []):
            for ref, kind, store in (("configMapRef", "ConfigMap", self.configmaps), ("secretRef", "Secret", self.secrets)):
                if ref in source:
                    name = source[ref]["name"]
                    if name not in store:
                        raise CheckFailed(f"{self.name}/{container['name']}: no {kind} named {name}")
                    env.update(store[name])
        for var in container.get("env", []):
            if "value" in var:
                env[var["name"]] = var["value"]
            elif "configMapKeyRef" in var.get("valueFrom", {}):
                ref = var["valueFrom"]["configMapKeyRef"]
                env[var["name"]] = lookup("configMap", ref, ref["key"])
            elif "secretKeyRef" in var.get("valueFrom", {}):
                ref = var["valueFrom"]["secretKeyRef"]
                env[var["name"]] = lookup("secret", ref, ref["key"])
            else:
                raise CheckFailed(f"{self.name}/{container['name']}: env {var['name']}: only value, configMapKeyRef and secretKeyRef are emulated")
        return {k: self.rewrite(v, mounts) if k not in ("PATH", "HOME") else v for k, v in env.items()}

    def command(self, container, mounts):
        command = container.get("command") or ["/usr/bin/herald"]
        return [self.rewrite(a, mounts) for a in command + container.get("args", [])]

    def start(self, container):
        mounts = self.mounts(container)
        env = self.environment(container, mounts)
        argv = self.command(container, mounts)
        workdir = os.path.join(self.root, "cwd-" + container["name"])
        os.makedirs(workdir)
        log = os.path.join(self.root, container["name"] + ".log")
        print(f"  {self.name}/{container['name']}: {' '.join(argv)}", flush=True)
        print(f"    env: {' '.join(sorted(k for k in env if k not in ('PATH', 'HOME')))}", flush=True)
        with open(log, "w") as out:
            process = subprocess.Popen(argv, env=env, cwd=workdir, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append((container["name"], process, log, workdir))
        return process, mounts, env

    def probe(self, container, probe, mounts, env):
        """True when the probe passes once."""
        if "httpGet" in probe:
            port = probe["httpGet"]["port"]
            if isinstance(port, str):
                port = next(p["containerPort"] for p in container["ports"] if p["name"] == port)
            url = f"http://127.0.0.1:{self.ports[port]}{probe['httpGet'].get('path', '/')}"
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    return 200 <= response.status < 400, response.read().decode()
            except (urllib.error.URLError, OSError) as error:
                return False, str(error)
        if "tcpSocket" in probe:
            try:
                socket.create_connection(("127.0.0.1", self.ports[probe["tcpSocket"]["port"]]), timeout=2).close()
                return True, ""
            except OSError as error:
                return False, str(error)
        if "exec" in probe:
            argv = [self.rewrite(a, mounts) for a in probe["exec"]["command"]]
            result = subprocess.run(argv, env=env, capture_output=True, timeout=10)
            return result.returncode == 0, result.stdout.decode() + result.stderr.decode()
        raise CheckFailed(f"{self.name}/{container['name']}: unknown probe {probe}")

    def wait_probe(self, container, kind, process, mounts, env, timeout):
        probe = container.get(kind)
        if probe is None:
            raise CheckFailed(f"{self.name}/{container['name']}: no {kind}")
        deadline = time.monotonic() + timeout
        detail = ""
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise CheckFailed(f"{self.name}/{container['name']} exited with {process.returncode} before its {kind} passed:\n{self.tail(container['name'])}")
            ok, detail = self.probe(container, probe, mounts, env)
            if ok:
                return detail
            time.sleep(0.5)
        raise CheckFailed(f"{self.name}/{container['name']}: {kind} did not pass within {timeout}s ({detail}):\n{self.tail(container['name'])}")

    def tail(self, name, lines=30):
        for container, _, log, _ in self.processes:
            if container == name:
                with open(log, errors="replace") as f:
                    return "".join(f.readlines()[-lines:])
        return ""

    def run_to_completion(self, container, timeout):
        process, _, _ = self.start(container)
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"{self.name}/{container['name']} did not finish within {timeout}s:\n{self.tail(container['name'])}")
        if code != 0:
            raise CheckFailed(f"{self.name}/{container['name']} exited with {code}:\n{self.tail(container['name'])}")
        print(f"    finished (exit 0)", flush=True)

    def run(self, is_job, timeout):
        """Starts the pod as the kubelet would; returns each ready container's probe answer."""
        answers = {}
        for container in self.spec.get("initContainers", []):
            if container.get("restartPolicy") == "Always":
                process, mounts, env = self.start(container)
                self.wait_probe(container, "startupProbe", process, mounts, env, timeout)
                print("    started (startupProbe passed)", flush=True)
            else:
                self.run_to_completion(container, timeout)
        for container in self.spec["containers"]:
            if is_job:
                self.run_to_completion(container, timeout)
                continue
            process, mounts, env = self.start(container)
            answers[container["name"]] = (env, self.wait_probe(container, "readinessProbe", process, mounts, env, timeout))
            print(f"    ready: {answers[container['name']][1].strip()[:200]}", flush=True)
            if "livenessProbe" in container:
                ok, detail = self.probe(container, container["livenessProbe"], mounts, env)
                if not ok:
                    raise CheckFailed(f"{self.name}/{container['name']}: livenessProbe fails once ready: {detail}")
        return answers

    def stop(self, check=True):
        """SIGTERM to every process, main containers first; each must exit within the grace period."""
        grace = self.spec.get("terminationGracePeriodSeconds", 30)
        started = time.monotonic()
        for _, process, _, _ in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        problems = []
        for name, process, _, workdir in reversed(self.processes):
            try:
                process.wait(timeout=max(1, grace - (time.monotonic() - started)))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                problems.append(f"{self.name}/{name} did not stop within terminationGracePeriodSeconds ({grace}s)")
            if process.returncode != 0:
                problems.append(f"{self.name}/{name} exited with {process.returncode} on SIGTERM:\n{self.tail(name)}")
            if os.listdir(workdir):
                problems.append(f"{self.name}/{name} wrote into its working folder (read-only in the pod): {os.listdir(workdir)}")
        if check and problems:
            raise CheckFailed("\n".join(problems))
        if self.processes:
            print(f"  {self.name}: stopped in {time.monotonic() - started:.1f}s (grace {grace}s)", flush=True)


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def example_secret_keys(paths):
    """The keys of the example Secrets, by Secret name."""
    keys = {}
    for path in paths:
        for doc in load(path):
            keys.setdefault(doc["metadata"]["name"], set()).update((doc.get("stringData") or {}).keys() | (doc.get("data") or {}).keys())
    return keys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rendered", required=True, help="an overlay's `kubectl kustomize` output")
    parser.add_argument("--example-secrets", nargs="+", required=True, help="secret.example.yaml files: the Secret keys that exist")
    parser.add_argument("--secret-values", required=True, help="JSON: {secret name: {key: value}} for the test")
    parser.add_argument("--herald", required=True, help="the herald binary (the image's /usr/bin/herald)")
    parser.add_argument("--templates", required=True, help="the templates folder (the image's /usr/share/herald/templates)")
    parser.add_argument("--workdir", required=True, help="an empty folder for the pods' files")
    parser.add_argument("--timeout", type=int, default=60, help="seconds for each process to become ready or finish")
    args = parser.parse_args()
    IMAGE_PATHS["/usr/bin/herald"] = os.path.abspath(args.herald)
    IMAGE_PATHS["/usr/share/herald/templates"] = os.path.abspath(args.templates)

    docs = load(args.rendered)
    configmaps = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "ConfigMap"}
    values = json.loads(open(args.secret_values).read())
    secrets = {}
    for name, keys in example_secret_keys(args.example_secrets).items():
        missing = keys - values.get(name, {}).keys()
        if missing:
            raise CheckFailed(f"the test has no value for Secret {name}'s keys {sorted(missing)}")
        secrets[name] = {k: values[name][k] for k in keys}

    # The migration first (the others need the schema), then the Deployments.
    workloads = sorted((d for d in docs if d["kind"] in ("Job", "Deployment")), key=lambda d: d["kind"] != "Job")
    if not workloads:
        raise CheckFailed(f"{args.rendered}: no workloads")
    passed = 0
    for doc in workloads:
        name = f"{doc['kind'].lower()}/{doc['metadata']['name']}"
        spec = doc["spec"]["template"]["spec"]
        root = os.path.join(args.workdir, doc["metadata"]["name"])
        os.makedirs(root)
        print(f"{name}:", flush=True)
        pod = Pod(name, spec, configmaps, secrets, root)
        try:
            answers = pod.run(doc["kind"] == "Job", args.timeout)
            if doc["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "api":
                for container, (env, answer) in answers.items():
                    # The API's readiness must not depend on the broker.
                    broker = sorted(k for k in env if k.startswith("HERALD_AMQP_"))
                    if broker:
                        raise CheckFailed(f"{name}/{container} gets broker settings: {broker}")
                    if json.loads(answer).get("checks") != {"database": "ok"}:
                        raise CheckFailed(f"{name}/{container}: /readyz checks more than the database: {answer}")
        except BaseException:
            pod.stop(check=False)
            raise
        pod.stop()
        passed += 1
    print(f"{args.rendered}: {passed} workloads ready", flush=True)


if __name__ == "__main__":
    try:
        main()
    except CheckFailed as error:
        print(f"k8s-check: FAILED: {error}", file=sys.stderr)
        sys.exit(1)
