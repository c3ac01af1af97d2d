"""Herald's fault campaign (issue 11, section 1; docs/reliability.md, "The fault campaign").

Starts a private PostgreSQL and RabbitMQ (one broker, or a 3-node cluster with quorum queues),
`herald sandbox`, loopback proxies in front of the broker, the database and both providers,
and several `herald worker` processes with partitions on; publishes a steady stream of events
to users with an iPhone and an Android phone each; injects faults at random moments; then lets
the backlog drain, stops everything and runs analyze.py on the run folder.

Run it through scripts/campaign.sh (which builds Herald and the Python environment).
Everything listens on 127.0.0.1; every loop is bounded in time.
"""

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiormq

import analyze

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CTL = ROOT / "deploy" / "local" / "ctl.sh"
PG_BIN = Path(os.environ.get("HERALD_PG_BIN", "/usr/lib/postgresql/15/bin"))
QUEUE = "w1.pushnotification"
EXCHANGE = "herald"
# The campaign's own queue, bound like the work queue: the broker's order of arrival of every
# event (`witness.jsonl`), the evidence analyze.py asks of an order violation it charges to the
# publisher.
WITNESS = QUEUE + ".witness"
EVENT_ID = "CampaignEvent"


def now():
    return time.time()


class Run:
    """The run folder and the timeline every component appends to (`timeline.jsonl`)."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.timeline = open(folder / "timeline.jsonl", "a", buffering=1)
        self.started = now()

    def note(self, kind, **fields):
        fields.update(kind=kind, t=now())
        self.timeline.write(json.dumps(fields) + "\n")
        elapsed = fields["t"] - self.started
        detail = " ".join(f"{k}={v}" for k, v in fields.items() if k not in ("kind", "t"))
        print(f"[campaign {elapsed:7.1f}s] {kind} {detail}", flush=True)


# ---------------------------------------------------------------------------------------------
# Services: PostgreSQL and RabbitMQ through deploy/local/ctl.sh, each node in its own folder.


class Node:
    """One RabbitMQ node (or the PostgreSQL server) driven by deploy/local/ctl.sh."""

    def __init__(self, run: Run, name: str, folder: Path, amqp_port: int, pg_port: int, node_name: str, cookie: str):
        self.run, self.name, self.folder = run, name, folder
        self.amqp_port, self.pg_port, self.node_name = amqp_port, pg_port, node_name
        self.cookie = cookie

    def env(self):
        env = dict(os.environ)
        env.update(
            HERALD_LOCAL_DIR=str(self.folder),
            HERALD_LOCAL_AMQP_PORT=str(self.amqp_port),
            HERALD_LOCAL_PG_PORT=str(self.pg_port),
            HERALD_LOCAL_RMQ_NODE=self.node_name,
        )
        return env

    def ctl(self, action, service, check=True):
        self.folder.mkdir(parents=True, exist_ok=True)
        if service == "rabbitmq":
            # Cluster members share one Erlang cookie (HOME is the node's folder).
            rmq = self.folder / "rabbitmq"
            rmq.mkdir(parents=True, exist_ok=True)
            cookie = rmq / ".erlang.cookie"
            if not cookie.exists():
                cookie.write_text(self.cookie)
                cookie.chmod(0o400)
        with open(self.folder / "ctl.log", "a") as log:
            result = subprocess.run(["bash", str(CTL), action, service], env=self.env(), cwd=self.folder, stdout=log, stderr=log, timeout=180)
        if check and result.returncode != 0:
            raise RuntimeError(f"ctl.sh {action} {service} ({self.name}) failed; see {self.folder}/ctl.log")

    def rabbitmqctl(self, *args, check=True):
        env = self.env()
        rmq = self.folder / "rabbitmq"
        env.update(
            HOME=str(rmq), RABBITMQ_NODENAME=self.node_name, ERL_EPMD_ADDRESS="127.0.0.1",
            RABBITMQ_MNESIA_BASE=str(rmq / "mnesia"), RABBITMQ_LOG_BASE=str(rmq / "log"),
            RABBITMQ_PID_FILE=str(rmq / "rabbit.pid"), RABBITMQ_ENABLED_PLUGINS_FILE=str(rmq / "enabled_plugins"),
            RABBITMQ_CONFIG_FILE=str(rmq / "rabbitmq"),
        )
        return subprocess.run(["/usr/lib/rabbitmq/bin/rabbitmqctl", "-n", self.node_name, *args], env=env, capture_output=True, text=True, timeout=120, check=check)

    def rabbit_pid(self):
        try:
            return int((self.folder / "rabbitmq" / "rabbit.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def kill_rabbit(self):
        """kill -9 of the node's Erlang VM and its port helpers (epmd, shared, stays)."""
        pid = self.rabbit_pid()
        if pid:
            children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
            for p in [pid, *map(int, children)]:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for _ in range(100):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.1)

    def pg_ctl(self, *args):
        data = self.folder / "postgres" / "data"
        return subprocess.run(
            ["runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(data), *args], capture_output=True, text=True, timeout=120
        )


# ---------------------------------------------------------------------------------------------
# Herald processes.


class Workers:
    """`herald worker` processes; a killed or stopped one is started again by ``restart``."""

    def __init__(self, run: Run, herald: str, count: int, env: dict, config: str):
        self.run, self.herald, self.count, self.env, self.config = run, herald, count, env, config
        self.procs = [None] * count
        self.peak_rss_kib = [0] * count
        self.incarnations = [0] * count
        self.expected_down = set()  # slots a fault is stopping on purpose
        self.unexpected_exits = []

    def start(self, i):
        log = open(self.run.folder / f"worker-{i}.log", "ab")
        self.procs[i] = subprocess.Popen([self.herald, "worker", "--config", self.config], env=self.env, stdout=log, stderr=log, start_new_session=True)
        self.incarnations[i] += 1
        self.run.note("worker-started", worker=i, pid=self.procs[i].pid)

    def start_all(self):
        for i in range(self.count):
            self.start(i)

    def alive(self, i):
        p = self.procs[i]
        return p is not None and p.poll() is None

    def sample_rss(self):
        for i, p in enumerate(self.procs):
            if p is None or p.poll() is not None:
                continue
            try:
                for line in analyze.read_lines(f"/proc/{p.pid}/status"):
                    if line.startswith("VmRSS:"):
                        self.peak_rss_kib[i] = max(self.peak_rss_kib[i], int(line.split()[1]))
            except OSError:
                pass

    def signal(self, i, sig):
        p = self.procs[i]
        if p is not None and p.poll() is None:
            p.send_signal(sig)

    async def wait_exit(self, i, timeout):
        p = self.procs[i]
        deadline = now() + timeout
        while p is not None and p.poll() is None and now() < deadline:
            await asyncio.sleep(0.1)
        return p is None or p.poll() is not None

    async def stop_all(self, timeout=60):
        for i in range(self.count):
            self.signal(i, signal.SIGTERM)
        for i in range(self.count):
            if not await self.wait_exit(i, timeout):
                self.signal(i, signal.SIGKILL)
                await self.wait_exit(i, 5)
            p = self.procs[i]
            self.run.note("worker-exited", worker=i, status=p.returncode if p else None)


# ---------------------------------------------------------------------------------------------
# The workload: users with two devices each, events for one or three of them.


def device_token_ios(u):
    return "%064x" % (0xC0FFEE0000000000 + u)


def device_token_android(u):
    return f"campaign-fcm-{u}"


def write_devices(path: Path, users: int):
    with open(path, "w") as f:
        for u in range(users):
            common = dict(user_id=f"cu{u}", culture="ru-RU", zone="campaign", branch="c", tags=[])
            f.write(json.dumps(dict(device_id=f"cu{u}-ios", platform="ios", token=device_token_ios(u), **common)) + "\n")
            f.write(json.dumps(dict(device_id=f"cu{u}-android", platform="android", token=device_token_android(u), **common)) + "\n")


def write_templates(folder: Path):
    """The repository's templates plus `CampaignEvent`, whose text carries the event's number
    (`{0}`) so that every recorded push names its event."""
    shutil.copytree(ROOT / "templates", folder)
    for resx in folder.glob("*.resx"):
        text = resx.read_text()
        entry = '  <data name="CampaignEvent" xml:space="preserve">\n    <value>Campaign event {0} for {1}</value>\n  </data>\n</root>'
        resx.write_text(text.replace("</root>", entry, 1))
    events = json.loads((folder / "events.json").read_text())
    events["events"][EVENT_ID] = {
        "description": "fault campaign", "tag": "campaign", "targetScreen": "timeline", "priority": "high",
        "sound": "default", "private": False, "silent": False, "ttlSeconds": 86400,
    }
    (folder / "events.json").write_text(json.dumps(events, ensure_ascii=False, indent=2))


def event_body(seq: int, users: list, run_id: str) -> bytes:
    filters = "".join(f'<Filter name="UserId" value="cu{u}" />' for u in users)
    return (
        f"<PushNotification><EventId>{EVENT_ID}</EventId><EventType>Message</EventType>"
        f"<EventDateTime>2026-11-25T12:00:00.{seq % 10_000_000:07d}+00:00</EventDateTime>"
        f"<EventFilters>{filters}</EventFilters>"
        f'<EventParams><EventParam name="seq" value="{seq}" /><EventParam name="run" value="{run_id}" /></EventParams>'
        f"</PushNotification>"
    ).encode()


class Publisher:
    """Publishes at a steady rate with publisher confirms, straight to the broker (not through
    the workers' proxy), in order on one channel at a time. An unconfirmed message is published
    again, with the same message-id, after a reconnect: the producer behaviour docs/formats.md
    asks for."""

    STALLED = 60  # a channel with publishes outstanding that confirms nothing this long is closed

    def __init__(self, run: Run, urls: list, rate: int, users: int, run_id: str, rng: random.Random):
        self.run, self.urls, self.rate, self.users, self.run_id, self.rng = run, urls, rate, users, run_id, rng
        self.seq = 0
        self.log = open(run.folder / "published.jsonl", "a", buffering=1)
        self.confirmed = 0
        self.republished = 0
        self.stopping = False
        self.pending = {}  # seq -> (body, properties-args, record)
        self.last_confirm = now()
        self.stalled = 0  # channels closed for confirming nothing for STALLED seconds

    def next_event(self):
        self.seq += 1
        if self.rng.random() < 0.15:
            users = self.rng.sample(range(self.users), 3)
        else:
            users = [self.rng.randrange(self.users)]
        return self.seq, users

    async def connect(self):
        turn = 0
        while not self.stopping:
            url = self.urls[turn % len(self.urls)]
            turn += 1
            try:
                connection = await asyncio.wait_for(aiormq.connect(url), 5)
                channel = await connection.channel(publisher_confirms=True)
                return connection, channel
            except Exception:
                await asyncio.sleep(0.5)
        return None, None

    @staticmethod
    def tagged(channel, coroutine):
        future = asyncio.ensure_future(coroutine)
        future.channel = channel
        return future

    async def publish_one(self, channel, seq, body, message_id, users, first_time):
        sent = now()  # this attempt's: a resend after a lost channel reaches the broker after later events
        properties = aiormq.spec.Basic.Properties(
            content_type="application/xml", delivery_mode=2, message_id=message_id,
            headers={"timestamp_in_ms": int(first_time * 1000)},
        )
        # No timeout of its own: one that gave up on a publish still waiting for the channel (the
        # broker's flow control) let later ones go first, and the broker had them out of order
        # (run_until closes a channel that confirms nothing for a minute instead, all at once).
        await channel.basic_publish(body, exchange=EXCHANGE, routing_key=QUEUE, properties=properties)
        self.last_confirm = now()
        if self.pending.pop(seq, None) is None:
            return  # confirmed before, on another channel
        self.confirmed += 1
        self.log.write(json.dumps(dict(seq=seq, users=users, t=first_time, sent=sent, confirmed=now())) + "\n")

    async def run_until(self, deadline):
        interval = 0.02
        per_tick = max(1, round(self.rate * interval))
        connection = channel = None
        next_tick = now()
        inflight = set()
        while now() < deadline:
            if channel is None or channel.is_closed:
                if connection is not None:
                    try:
                        await connection.close()
                    except Exception:
                        pass
                self.run.note("publisher-connecting", pending=len(self.pending))
                connection, channel = await self.connect()
                if channel is None:
                    break
                self.run.note("publisher-connected", pending=len(self.pending))
                self.last_confirm = now()
                # Everything not confirmed goes again, oldest first, same message-id.
                for seq, (body, message_id, users, first_time) in sorted(self.pending.items()):
                    self.republished += 1
                    inflight.add(self.tagged(channel, self.publish_one(channel, seq, body, message_id, users, first_time)))
                next_tick = max(next_tick, now())
            if self.pending and now() - self.last_confirm > self.STALLED:
                # Every publish of the channel goes again, in order (closing cancels them all).
                self.stalled += 1
                self.run.note("publisher-stalled", pending=len(self.pending))
                try:
                    await channel.close()
                except Exception:
                    pass
                continue
            delay = next_tick - now()
            if delay > 0:
                await asyncio.sleep(delay)
            next_tick += interval
            if now() - next_tick > 1:  # more than a second behind (an outage): skip, do not burst
                next_tick = now()
            if len(self.pending) > self.rate * 30:
                continue  # the broker takes nothing: do not grow without bound
            for _ in range(per_tick):
                seq, users = self.next_event()
                body = event_body(seq, users, self.run_id)
                message_id = f"{self.run_id}-{seq}"
                t = now()
                self.pending[seq] = (body, message_id, users, t)
                inflight.add(self.tagged(channel, self.publish_one(channel, seq, body, message_id, users, t)))
            done = {f for f in inflight if f.done()}
            for f in done:
                # A publish that failed on the current channel: start over on a new one (failures
                # of an earlier channel's publishes are already being retried).
                if f.exception() is not None and channel is not None and getattr(f, "channel", None) is channel:
                    try:
                        await channel.close()
                    except Exception:
                        pass
                    channel = None
            inflight -= done
        # Finish: confirm everything still pending (reconnecting if needed), bounded.
        end = now() + 120
        while (self.pending or inflight) and now() < end:
            if inflight:
                await asyncio.wait(inflight, timeout=1)
                inflight = {f for f in inflight if not f.done()}
            if self.pending and not inflight:
                connection, channel = await self.connect()
                if channel is None:
                    break
                for seq, (body, message_id, users, first_time) in sorted(self.pending.items()):
                    self.republished += 1
                    inflight.add(self.tagged(channel, self.publish_one(channel, seq, body, message_id, users, first_time)))
        self.run.note("publisher-done", published=self.confirmed, unconfirmed=len(self.pending), republished=self.republished, stalled=self.stalled)
        if connection is not None:
            try:
                await connection.close()
            except Exception:
                pass


# ---------------------------------------------------------------------------------------------
# Faults.


class Campaign:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        self.run_id = f"c{stamp}"
        self.folder = Path(args.out or f"/tmp/herald-campaign-{stamp}")
        if self.folder.exists() and any(self.folder.iterdir()):
            # Its records would be appended to and mixed with the earlier run's.
            sys.exit(f"campaign: {self.folder} already holds a run; give --out a new folder")
        self.run = Run(self.folder)
        self.proxy_proc = None
        self.sandbox_proc = None
        ports = random.Random().sample(range(10_000, 12_700), 3)
        self.pg_port = random.Random().randrange(13_000, 16_000)
        cookie = "HERALDCAMPAIGN" + "".join(random.Random().choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(16))
        n_nodes = 3 if args.cluster else 1
        self.nodes = [
            Node(self.run, f"rabbit{i}", self.folder / f"stack{i}", ports[i], self.pg_port, f"campaign{i}-{stamp.replace('-', '')}@localhost", cookie)
            for i in range(n_nodes)
        ]
        self.pg = self.nodes[0]
        base = random.Random().randrange(16_000, 16_900, 10)
        self.proxy_ports = dict(control=base, amqp=base + 1, pg=base + 2, apns=base + 3, fcm=base + 4)
        self.sandbox_ports = dict(apns=base + 5, fcm=base + 6)
        self.faults_done = []

    # -- set-up ------------------------------------------------------------------------------

    def herald(self, *args, env=None, check=True):
        result = subprocess.run([self.args.herald, *args], env=env or self.direct_env, capture_output=True, text=True, timeout=300)
        if check and result.returncode != 0:
            raise RuntimeError(f"herald {' '.join(args)} failed: {result.stderr[-2000:]}")
        return result

    def start_services(self):
        self.run.note("stack-starting", nodes=len(self.nodes), pg_port=self.pg_port, amqp_ports=[n.amqp_port for n in self.nodes])
        self.pg.ctl("start", "postgres")
        for node in self.nodes:
            node.ctl("start", "rabbitmq")
        if len(self.nodes) > 1:
            first = self.nodes[0].node_name
            for node in self.nodes[1:]:
                node.rabbitmqctl("stop_app")
                node.rabbitmqctl("join_cluster", first)
                node.rabbitmqctl("start_app")
            status = self.nodes[0].rabbitmqctl("cluster_status", "--formatter", "json")
            running = json.loads(status.stdout).get("running_nodes", [])
            self.run.note("cluster-formed", running=running)
            if len(running) != len(self.nodes):
                raise RuntimeError(f"cluster not formed: {status.stdout}")
        self.amqp_direct = [f"amqp://guest:guest@127.0.0.1:{n.amqp_port}/" for n in self.nodes]
        self.db_direct = f"postgres://postgres@127.0.0.1:{self.pg_port}/herald"
        self.direct_env = dict(os.environ, HERALD_AMQP_URL=self.amqp_direct[0], HERALD_DATABASE_URL=self.db_direct, HERALD_LOG_LEVEL="warning")

    def start_sandbox(self):
        sandbox = self.folder / "sandbox"
        sandbox.mkdir(exist_ok=True)
        log = open(self.folder / "sandbox.log", "ab")
        self.sandbox_proc = subprocess.Popen(
            [self.args.herald, "sandbox", "--dir", str(sandbox), "--apns-port", str(self.sandbox_ports["apns"]), "--fcm-port", str(self.sandbox_ports["fcm"]),
             "--record", str(self.folder / "pushes.jsonl"), "--response-delay", self.args.response_delay],
            stdout=log, stderr=log, start_new_session=True,
        )
        for _ in range(300):
            if (sandbox / "sandbox.json").exists() and (sandbox / "herald.yaml").exists():
                break
            if self.sandbox_proc.poll() is not None:
                raise RuntimeError(f"herald sandbox exited; see {self.folder}/sandbox.log")
            time.sleep(0.1)
        self.sandbox_ca = str(sandbox / "ca.pem")
        self.sandbox_config = str(sandbox / "herald.yaml")
        self.run.note("sandbox-started", ports=self.sandbox_ports)

    def start_proxy(self):
        p = self.proxy_ports
        routes = [
            f"amqp:{p['amqp']}:{','.join(str(n.amqp_port) for n in self.nodes)}",
            f"pg:{p['pg']}:{self.pg_port}",
            f"apns:{p['apns']}:{self.sandbox_ports['apns']}",
            f"fcm:{p['fcm']}:{self.sandbox_ports['fcm']}",
        ]
        log = open(self.folder / "proxy.log", "ab")
        args = [sys.executable, str(HERE / "proxy.py"), "--control", str(p["control"])]
        for r in routes:
            args += ["--route", r]
        self.proxy_proc = subprocess.Popen(args, stdout=log, stderr=log, start_new_session=True)
        for _ in range(100):
            try:
                self.proxy_command("status")
                break
            except OSError:
                time.sleep(0.1)
        self.run.note("proxy-started", ports=p)

    def proxy_command(self, command):
        import socket

        with socket.create_connection(("127.0.0.1", self.proxy_ports["control"]), timeout=10) as s:
            s.sendall((command + "\n").encode())
            data = b""
            while not data.endswith(b"ok\n") and b"error" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data.decode()

    def prepare_database(self):
        self.herald("migrate")
        templates = self.folder / "templates"
        if not templates.exists():
            write_templates(templates)
        self.herald("templates", "import", str(templates))
        devices = self.folder / "devices.jsonl"
        write_devices(devices, self.args.users)
        self.herald("devices", "import", str(devices))
        self.run.note("database-ready", users=self.args.users, devices=2 * self.args.users)

    def start_workers(self):
        p = self.proxy_ports
        env = dict(
            os.environ,
            HERALD_AMQP_URL=f"amqp://guest:guest@127.0.0.1:{p['amqp']}/",
            HERALD_DATABASE_URL=f"postgres://postgres@127.0.0.1:{p['pg']}/herald",
            HERALD_APNS_URL=f"https://localhost:{p['apns']}",
            HERALD_FCM_URL=f"https://localhost:{p['fcm']}",
            HERALD_WORKER_SENDER="providers",
            HERALD_WORKER_PARTITIONS=str(self.args.partitions),
            HERALD_WORKER_THREADS=str(self.args.threads),
            HERALD_AMQP_QUEUE_TYPE="quorum" if self.args.cluster else "classic",
            HERALD_LOG_FORMAT="json",
            HERALD_LOG_LEVEL="info",
        )
        self.workers = Workers(self.run, self.args.herald, self.args.workers, env, self.sandbox_config)
        # The scaling run starts with two workers; the other slots are started by scale-up.
        initial = 2 if self.args.scale else self.args.workers
        self.workers.expected_down.update(range(initial, self.args.workers))
        for i in range(initial):
            self.workers.start(i)
        self.note_scale()

    async def wait_for_queue(self):
        deadline = now() + 120
        while now() < deadline:
            try:
                connection = await aiormq.connect(self.amqp_direct[0])
                channel = await connection.channel()
                await channel.queue_declare(QUEUE, passive=True)
                await connection.close()
                self.run.note("queue-declared")
                return
            except Exception:
                await asyncio.sleep(1)
        raise RuntimeError("the workers did not declare the queue within 120 s")

    # -- faults ------------------------------------------------------------------------------

    def note_scale(self):
        """The live workers after a change of the scaling run (the analyzer times each worker's
        share of the partitions from here)."""
        if self.args.scale:
            self.run.note("scale-change", live=[i for i in range(self.workers.count) if self.workers.alive(i)])

    async def stop_worker(self, i, sig):
        self.workers.expected_down.add(i)
        self.workers.signal(i, sig)
        exited = await self.workers.wait_exit(i, 60)
        self.run.note("worker-exited", worker=i, status=self.workers.procs[i].returncode if exited else None)

    def sandbox_admin(self, method, path, body=None):
        import ssl
        import urllib.request

        context = ssl.create_default_context(cafile=self.sandbox_ca)
        request = urllib.request.Request(f"https://localhost:{self.sandbox_ports['fcm']}/_sandbox/{path}", method=method, data=body.encode() if body else None)
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status

    async def fault(self, kind, **detail):
        """Runs one fault to its end (what it breaks, how long, putting it right)."""
        a = self.args
        self.run.note("fault-start", fault=kind, **detail)
        started = now()
        if kind in ("worker-kill", "worker-stop"):
            i = detail["worker"]
            await self.stop_worker(i, signal.SIGKILL if kind == "worker-kill" else signal.SIGTERM)
            self.note_scale()
            await asyncio.sleep(3)
            self.workers.start(i)
            self.workers.expected_down.discard(i)
            self.note_scale()
        elif kind == "scale-up":
            for i in detail["workers"]:
                self.workers.start(i)
                self.workers.expected_down.discard(i)
            self.note_scale()
        elif kind == "scale-down":
            await asyncio.gather(*(self.stop_worker(i, signal.SIGTERM) for i in detail["workers"]))
            self.note_scale()
        elif kind == "rolling-restart":
            for i in detail["workers"]:
                await self.stop_worker(i, signal.SIGTERM)
                self.note_scale()
                self.workers.start(i)
                self.workers.expected_down.discard(i)
                self.note_scale()
                await asyncio.sleep(detail["pause"])
        elif kind == "broker-restart":
            node = self.nodes[detail.get("node", 0)]
            await asyncio.to_thread(node.ctl, "restart", "rabbitmq")
        elif kind == "broker-kill":
            node = self.nodes[detail.get("node", 0)]
            await asyncio.to_thread(node.kill_rabbit)
            await asyncio.sleep(3)
            await asyncio.to_thread(node.ctl, "start", "rabbitmq")
        elif kind == "postgres-restart":
            await asyncio.to_thread(self.pg.ctl, "restart", "postgres")
        elif kind == "postgres-immediate":
            await asyncio.to_thread(self.pg.pg_ctl, "-m", "immediate", "stop")
            await asyncio.sleep(5)
            await asyncio.to_thread(self.pg.ctl, "start", "postgres")
        elif kind in ("provider-503-half", "provider-503-all", "provider-500-all", "provider-slow"):
            provider = detail["provider"]
            body = {
                "provider-503-half": {"status": 503, "fraction": 0.5},
                "provider-503-all": {"status": 503, "fraction": 1},
                "provider-500-all": {"status": 500, "fraction": 1},
                "provider-slow": {"status": 0, "delay_ms": 2000},
            }[kind]
            await asyncio.to_thread(self.sandbox_admin, "PUT", f"{provider}/outage", json.dumps(body))
            await asyncio.sleep(detail["seconds"])
            await asyncio.to_thread(self.sandbox_admin, "DELETE", f"{provider}/outage")
        elif kind == "provider-refuse":
            await asyncio.to_thread(self.proxy_command, f"refuse {detail['provider']}")
            await asyncio.sleep(detail["seconds"])
            await asyncio.to_thread(self.proxy_command, f"restore {detail['provider']}")
        elif kind in ("cut-broker", "cut-database"):
            route = "amqp" if kind == "cut-broker" else "pg"
            await asyncio.to_thread(self.proxy_command, f"cut {route}")
            await asyncio.sleep(detail["seconds"])
            await asyncio.to_thread(self.proxy_command, f"restore {route}")
        else:
            raise ValueError(kind)
        ended = now()
        self.run.note("fault-end", fault=kind, lasted=round(ended - started, 1), **detail)
        self.faults_done.append(dict(fault=kind, start=started, end=ended, **detail))

    def plan(self, minutes):
        """The faults of a run, each several times where it makes sense, in random order.
        Provider faults hit a random provider (the other one is the healthy one measured)."""
        rng, a = self.rng, self.args
        w = lambda: rng.randrange(a.workers)  # noqa: E731
        p = lambda: rng.choice(["apns", "fcm"])  # noqa: E731
        if a.scale:
            # Issue 44's run, in this order: 2 → 4 → 2 workers, a rolling restart one at a time,
            # a kill -9.
            return [
                ("scale-up", dict(workers=[2, 3])), ("scale-down", dict(workers=[2, 3])),
                ("rolling-restart", dict(workers=[0, 1], pause=15)), ("worker-kill", dict(worker=0)),
            ]
        if a.cluster:
            node = lambda: rng.randrange(len(self.nodes))  # noqa: E731
            faults = [("broker-kill", dict(node=node())) for _ in range(2)] + [("broker-restart", dict(node=node())) for _ in range(2)]
            faults += [("worker-kill", dict(worker=w())), ("provider-503-all", dict(provider=p(), seconds=a.outage_seconds))]
        else:
            faults = [("worker-kill", dict(worker=w())) for _ in range(3)]
            faults += [("worker-stop", dict(worker=w())) for _ in range(2)]
            faults += [("broker-restart", {}), ("broker-restart", {}), ("broker-kill", {})]
            faults += [("postgres-restart", {}), ("postgres-restart", {}), ("postgres-immediate", {})]
            providers = ["apns", "fcm"]
            rng.shuffle(providers)
            faults += [("provider-503-half", dict(provider=providers[0], seconds=a.outage_seconds))]
            faults += [("provider-503-all", dict(provider=providers[1], seconds=a.outage_seconds))]
            faults += [("provider-500-all", dict(provider=providers[0], seconds=a.outage_seconds))]
            faults += [("provider-refuse", dict(provider=p(), seconds=2 * a.outage_seconds))]
            faults += [("provider-slow", dict(provider=p(), seconds=a.outage_seconds))]
            faults += [("cut-broker", dict(seconds=a.cut_seconds)), ("cut-database", dict(seconds=a.cut_seconds))]
        if a.faults:
            wanted = set(a.faults.split(","))
            faults = [f for f in faults if f[0] in wanted]
        rng.shuffle(faults)
        return faults

    async def inject(self, deadline):
        faults = self.plan(self.args.minutes)
        self.run.note("fault-plan", faults=[f[0] for f in faults])
        await asyncio.sleep(self.rng.uniform(15, 25))
        for kind, detail in faults:
            budget = deadline - now()
            expected = detail.get("seconds", 20)
            if budget < expected + 10:
                self.run.note("fault-skipped", fault=kind, reason="not enough time left")
                continue
            try:
                await self.fault(kind, **detail)
            except Exception as error:  # a fault that could not be carried out is noted, not fatal
                self.run.note("fault-error", fault=kind, error=repr(error))
            await asyncio.sleep(self.rng.uniform(self.args.gap_min, self.args.gap_max))

    async def sample(self, stop: asyncio.Event):
        """RSS of the workers every second; a worker that died on its own is noted and started."""
        while not stop.is_set():
            self.workers.sample_rss()
            for i in range(self.workers.count):
                if i not in self.workers.expected_down and not self.workers.alive(i):
                    status = self.workers.procs[i].returncode
                    self.workers.unexpected_exits.append(dict(worker=i, status=status, t=now()))
                    self.run.note("worker-died-unexpectedly", worker=i, status=status)
                    self.workers.start(i)
            await asyncio.sleep(1)

    def postgres_settings(self):
        """PostgreSQL's durability settings for the run (deploy/local/lib.sh: on unless
        HERALD_PG_DURABLE=0): with them off, an immediate stop also loses committed journal rows."""
        import psycopg

        with psycopg.connect(self.db_direct, connect_timeout=10) as db:
            row = db.execute("SELECT current_setting('fsync'), current_setting('synchronous_commit'), current_setting('full_page_writes')").fetchone()
        return dict(fsync=row[0], synchronous_commit=row[1], full_page_writes=row[2])

    async def watch_deferred(self, stop: asyncio.Event):
        """Every second, the journal rows in state 'deferred' (a circuit breaker held them back)
        into `deferred.jsonl`: the evidence analyze.py asks of an order violation it charges to
        the breaker. A deferred row becomes 'sent' later, so the state is read while it lasts;
        straight from PostgreSQL (not through the proxy), from the rows of the last 30 s
        (journal_recorded_at's BRIN index)."""
        import psycopg

        seen = set()
        db = None
        with open(self.folder / "deferred.jsonl", "a", buffering=1) as out:
            while not stop.is_set():
                try:
                    if db is None or db.closed:
                        db = await asyncio.to_thread(psycopg.connect, self.db_direct, connect_timeout=5, autocommit=True)
                    rows = await asyncio.to_thread(
                        lambda: db.execute(
                            "SELECT m.key_text, d.device_id, extract(epoch FROM j.recorded_at)::float8 FROM journal j "
                            "JOIN messages m ON m.id = j.message_id JOIN devices d ON d.id = j.device_ref "
                            "WHERE j.recorded_at > now() - interval '30 seconds' AND j.state = 'deferred'"
                        ).fetchall()
                    )
                    for key, device, t in rows:
                        if not key or not key.startswith(self.run_id + "-") or (key, device) in seen:
                            continue
                        seen.add((key, device))
                        out.write(json.dumps(dict(seq=int(key.rsplit("-", 1)[1]), device=device, t=t, seen=now())) + "\n")
                except Exception:
                    db = None  # a restart or an immediate stop of PostgreSQL: connect again
                try:
                    await asyncio.wait_for(stop.wait(), 1)
                except asyncio.TimeoutError:
                    pass
        if db is not None and not db.closed:
            db.close()

    async def witness(self, stop: asyncio.Event, bound: asyncio.Event):
        """Consumes WITNESS, bound to the exchange with the work queue's routing key, so that it
        receives every event the broker accepted in the order the work queue did, and writes
        each one's message-id to `witness.jsonl` in that order. The publisher cannot say it: a
        publish it gave up on (no confirm within 15 s) may have reached the broker, and one it
        began may wait in the client's channel. Durable (quorum with --cluster), acknowledged
        after the line is written: a lost connection redelivers, a repeat line changes nothing
        (analyze.py takes the first). Straight to the broker, each node in turn."""
        arguments = {"x-queue-type": "quorum"} if self.args.cluster else {}
        turn = 0
        with open(self.folder / "witness.jsonl", "a", buffering=1) as out:

            async def on_message(message):
                out.write(json.dumps(dict(id=message.header.properties.message_id, t=now())) + "\n")
                await message.channel.basic_ack(message.delivery.delivery_tag)

            while not stop.is_set():
                url = self.amqp_direct[turn % len(self.amqp_direct)]
                turn += 1
                connection = None
                try:
                    connection = await asyncio.wait_for(aiormq.connect(url), 5)
                    channel = await connection.channel()
                    await channel.basic_qos(prefetch_count=1000)
                    await channel.queue_declare(WITNESS, durable=True, arguments=arguments)
                    await channel.queue_bind(WITNESS, EXCHANGE, routing_key=QUEUE)
                    bound.set()
                    await channel.basic_consume(WITNESS, on_message)
                    while not stop.is_set() and not connection.is_closed:
                        try:
                            await asyncio.wait_for(stop.wait(), 1)
                        except asyncio.TimeoutError:
                            pass
                except Exception:
                    await asyncio.sleep(0.5)  # a broker fault: the next node, or this one again
                finally:
                    if connection is not None and not connection.is_closed:
                        try:
                            await connection.close()
                        except Exception:
                            pass

    async def drain(self, published):
        """Waits until every published event's pushes were recorded, or nothing more arrives
        for a while (bounded)."""
        expected = 0
        for line in analyze.read_lines(self.folder / "published.jsonl"):
            expected += 2 * len(json.loads(line)["users"])
        deadline = now() + self.args.drain_seconds
        last, last_change = -1, now()
        while now() < deadline:
            self.workers.sample_rss()
            try:
                recorded = sum(1 for _ in analyze.read_lines(self.folder / "pushes.jsonl"))
            except OSError:
                recorded = 0
            if recorded != last:
                last, last_change = recorded, now()
            if recorded >= expected and now() - last_change > 5:
                break
            if now() - last_change > self.args.quiet_seconds:
                break
            await asyncio.sleep(1)
        self.run.note("drained", expected=expected, recorded=last)

    async def main(self):
        a = self.args
        (self.folder / "args.json").write_text(json.dumps(vars(a), indent=2))
        try:
            await asyncio.to_thread(self.start_services)
            self.start_sandbox()
            self.start_proxy()
            await asyncio.to_thread(self.prepare_database)
            pg_settings = await asyncio.to_thread(self.postgres_settings)
            self.run.note("postgres-settings", **pg_settings)
            self.start_workers()
            await self.wait_for_queue()
            await asyncio.sleep(3)  # let the workers claim the partitions
            publisher = Publisher(self.run, self.amqp_direct, a.rate, a.users, self.run_id, self.rng)
            stop = asyncio.Event()
            sampler = asyncio.ensure_future(self.sample(stop))
            watcher = asyncio.ensure_future(self.watch_deferred(stop))
            bound = asyncio.Event()
            witness = asyncio.ensure_future(self.witness(stop, bound))
            await asyncio.wait_for(bound.wait(), 60)  # before the first event
            deadline = now() + a.minutes * 60
            self.run.note("publishing", rate=a.rate, minutes=a.minutes)
            injector = asyncio.ensure_future(self.inject(deadline - 20))
            await publisher.run_until(deadline)
            await injector
            await self.drain(publisher.confirmed)
            stop.set()
            await sampler
            await watcher
            await witness
            (self.folder / "workers.json").write_text(
                json.dumps(dict(peak_rss_kib=self.workers.peak_rss_kib, incarnations=self.workers.incarnations, unexpected_exits=self.workers.unexpected_exits), indent=2)
            )
            (self.folder / "faults.json").write_text(json.dumps(self.faults_done, indent=2))
            (self.folder / "run.json").write_text(
                json.dumps(dict(
                    run_id=self.run_id, amqp=self.amqp_direct, database=self.db_direct, queue=QUEUE, cluster=a.cluster, postgres=pg_settings,
                    published=publisher.confirmed, republished=publisher.republished, unconfirmed=len(publisher.pending),
                ), indent=2)
            )
        finally:
            await self.teardown()
        if (self.folder / "run.json").exists():
            self.summary = await asyncio.to_thread(analyze.analyze, self.folder)

    async def teardown(self):
        if getattr(self, "workers", None):
            await self.workers.stop_all()
        for proc in (self.sandbox_proc, self.proxy_proc):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.run.note("stopped-herald")


def main():
    parser = argparse.ArgumentParser(description="Herald's fault campaign (docs/reliability.md)")
    parser.add_argument("--herald", required=True, help="the herald binary")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--cluster", action="store_true", help="3-node RabbitMQ cluster, quorum queues")
    parser.add_argument("--rate", type=int, default=500, help="events per second")
    parser.add_argument("--users", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scale", action="store_true", help="the scaling run instead of the faults: workers 2 → 4 → 2, a rolling restart, a kill -9 (4 worker slots)")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--threads", type=int, default=64, help="worker.threads (lanes)")
    parser.add_argument("--response-delay", default="20ms", help="the sandbox's answer delay (a provider's round trip)")
    parser.add_argument("--outage-seconds", type=float, default=60)
    parser.add_argument("--cut-seconds", type=float, default=30)
    parser.add_argument("--gap-min", type=float, default=10)
    parser.add_argument("--gap-max", type=float, default=25)
    parser.add_argument("--drain-seconds", type=float, default=900, help="longest wait for the backlog after publishing")
    parser.add_argument("--quiet-seconds", type=float, default=180, help="stop waiting when nothing new arrives this long")
    parser.add_argument("--faults", help="only these fault kinds, comma separated")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", help="run folder (default /tmp/herald-campaign-<time>)")
    parser.add_argument("--keep-services", action="store_true", help="leave PostgreSQL and RabbitMQ running (to look at them)")
    args = parser.parse_args()
    if args.scale:
        args.workers = max(args.workers, 4)
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    campaign = Campaign(args)
    campaign.summary = None
    print(f"[campaign] run folder {campaign.folder}, seed {args.seed}", flush=True)
    try:
        asyncio.run(campaign.main())
    finally:
        if not args.keep_services:
            for node in campaign.nodes:
                node.ctl("stop", "rabbitmq", check=False)
            campaign.pg.ctl("stop", "postgres", check=False)
            campaign.run.note("stopped-services")
    print(campaign.folder)
    s = campaign.summary
    sys.exit(0 if s and s["passed"] else 1)


if __name__ == "__main__":
    main()
