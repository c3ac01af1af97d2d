#!/usr/bin/env python3
"""Load on Herald's REST API: many concurrent users, each registering, changing, reading and
removing its own devices and settings through /v1 and the legacy Subscribe/Unsubscribe.ashx,
mixed with bad requests (malformed JSON, unknown fields, bad values, no or bad token, a body
over the limit, the wrong content type, and reads and deletes of other users' devices).

Each user runs one request at a time and keeps what it set; every answer is checked against
that (a read returns exactly what this user wrote; a bad request gets its 4xx; no 5xx ever).
After the run, each user's devices and settings are read back through the API and compared,
and the database is checked for any subscription of a user on a device another user owns.

Prints latency percentiles per kind of request, the status counts, the violations, and the
API's resident memory sampled each second (peak from /proc/PID/status VmHWM).

    api-load.py --url http://127.0.0.1:PORT --secret HS256SECRET --pid API_PID --database-url URL \
        [--users 200] [--seconds 60] [--bad-share 0.25]

Started by scripts/api-load.sh, which runs the API on a scratch database. Needs aiohttp.
"""
import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter, defaultdict

import aiohttp

TAG_POOL = ["account", "t1", "t2", "promo", "invoices", "transfers", "security", "news"]


def token(secret, user, ttl=7200):
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64(json.dumps({"sub": user, "exp": int(time.time()) + ttl}).encode())
    signature = hmac.new(secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64(signature)}"


def apns_token(rng):
    return "%064x" % rng.getrandbits(256)


def fcm_token(rng):
    return "fcm_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_-:") for _ in range(60))


class Stats:
    def __init__(self):
        self.latency = defaultdict(list)  # kind -> seconds
        self.status = Counter()
        self.violations = []

    def violation(self, text):
        if len(self.violations) < 200:
            self.violations.append(text)
        else:
            self.violations[-1] = f"... and more ({text})"


class User:
    """One client: its own token, devices (v1 and legacy) and settings, and what it expects."""

    def __init__(self, index, secret, rng, users):
        self.index = index
        self.id = f"load-user-{index:04d}"
        self.headers = {"Authorization": "Bearer " + token(secret, self.id), "Content-Type": "application/json"}
        self.rng = rng
        self.users = users
        # device id -> {"platform", "culture", "tags"} as this user last set them (absent: removed)
        self.devices = {}
        # legacy device id -> set of tags, or "*" for every tag (absent: unsubscribed)
        self.legacy = {}
        self.settings = {"pushesEnabled": True, "mutedTags": []}

    def device_id(self, k):
        return f"dev-{self.index:04d}-{k}"

    def legacy_id(self, k):
        return f"legacy-{self.index:04d}-{k}"


async def call(session, stats, kind, method, url, headers=None, payload=None):
    """One request; `payload` is sent as JSON, or as is when it is bytes."""
    start = time.perf_counter()
    data = payload if payload is None or isinstance(payload, bytes) else json.dumps(payload).encode()
    async with session.request(method, url, headers=headers, data=data) as response:
        text = await response.read()
        elapsed = time.perf_counter() - start
    stats.latency[kind].append(elapsed)
    stats.status[response.status] += 1
    if response.status >= 500:
        stats.violation(f"{kind}: {method} {url} -> {response.status} {text[:200]!r}")
    return response.status, text


def parse(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


async def check_device(session, stats, base, user, device_id, kind):
    status, text = await call(session, stats, kind, "GET", f"{base}/v1/devices/{device_id}", user.headers)
    expected = user.devices.get(device_id)
    if expected is None:
        if status != 404:
            stats.violation(f"{user.id}: GET {device_id} (removed) -> {status} {text[:200]!r}")
        return
    body = parse(text) or {}
    if status != 200:
        stats.violation(f"{user.id}: GET {device_id} -> {status} {text[:200]!r}")
    elif (body.get("platform"), body.get("culture"), sorted(body.get("tags") or [])) != (
            expected["platform"], expected["culture"], sorted(expected["tags"])):
        stats.violation(f"{user.id}: GET {device_id} -> {body} expected {expected}")


async def check_settings(session, stats, base, user, kind):
    status, text = await call(session, stats, kind, "GET", f"{base}/v1/me/settings", user.headers)
    body = parse(text) or {}
    if status != 200 or body.get("pushesEnabled") != user.settings["pushesEnabled"] or \
            sorted(body.get("mutedTags") or []) != sorted(user.settings["mutedTags"]):
        stats.violation(f"{user.id}: GET settings -> {status} {text[:200]!r} expected {user.settings}")


async def good_request(session, stats, base, user):
    rng = user.rng
    k = rng.randrange(3)
    choice = rng.random()
    if choice < 0.25:
        device_id = user.device_id(k)
        platform = rng.choice(["ios", "android"])
        body = {"platform": platform, "token": apns_token(rng) if platform == "ios" else fcm_token(rng),
                "culture": rng.choice(["ru-RU", "en-US"]), "tags": rng.sample(TAG_POOL, rng.randrange(4))}
        status, text = await call(session, stats, "PUT device", "PUT", f"{base}/v1/devices/{device_id}", user.headers, body)
        if status in (200, 201):
            user.devices[device_id] = {"platform": platform, "culture": body["culture"], "tags": body["tags"]}
        else:
            stats.violation(f"{user.id}: PUT {device_id} -> {status} {text[:200]!r}")
    elif choice < 0.45:
        await check_device(session, stats, base, user, user.device_id(k), "GET device")
    elif choice < 0.52:
        device_id = user.device_id(k)
        status, text = await call(session, stats, "DELETE device", "DELETE", f"{base}/v1/devices/{device_id}", user.headers)
        expected = 204 if device_id in user.devices else 404
        if status != expected:
            stats.violation(f"{user.id}: DELETE {device_id} -> {status}, expected {expected}")
        user.devices.pop(device_id, None)
    elif choice < 0.62:
        body = {"pushesEnabled": rng.random() < 0.7, "mutedTags": rng.sample(TAG_POOL, rng.randrange(3))}
        status, text = await call(session, stats, "PUT settings", "PUT", f"{base}/v1/me/settings", user.headers, body)
        if status == 200:
            user.settings = body
        else:
            stats.violation(f"{user.id}: PUT settings -> {status} {text[:200]!r}")
    elif choice < 0.72:
        await check_settings(session, stats, base, user, "GET settings")
    elif choice < 0.87:
        device_id = user.legacy_id(k)
        tags = rng.sample(TAG_POOL, rng.randrange(4))
        body = {"os": "android", "culture": rng.choice(["ru-ru", "en-us"]), "id": device_id, "uri": fcm_token(rng), "tags": tags}
        status, text = await call(session, stats, "Subscribe.ashx", "POST", f"{base}/Subscribe.ashx", user.headers, body)
        if status == 200:
            user.legacy[device_id] = set(tags) if tags else "*"
        else:
            stats.violation(f"{user.id}: Subscribe {device_id} -> {status} {text[:200]!r}")
    elif choice < 0.95:
        device_id = user.legacy_id(k)
        tags = rng.sample(TAG_POOL, rng.randrange(3))
        body = {"id": device_id, "tags": tags}
        status, text = await call(session, stats, "Unsubscribe.ashx", "POST", f"{base}/Unsubscribe.ashx", user.headers, body)
        if status != 200:
            stats.violation(f"{user.id}: Unsubscribe {device_id} -> {status} {text[:200]!r}")
        elif device_id in user.legacy:
            current = user.legacy[device_id]
            if not tags:
                del user.legacy[device_id]
            elif current != "*":
                # Unsubscribing from every tag one has removes the subscription; from some tags of
                # "every tag" keeps it (with those tags excluded).
                remaining = current - set(tags)
                if remaining:
                    user.legacy[device_id] = remaining
                else:
                    del user.legacy[device_id]
    else:
        device_id = user.device_id(k)
        status, text = await call(session, stats, "GET notifications", "GET",
                                  f"{base}/v1/devices/{device_id}/notifications?after=0&limit=10", user.headers)
        expected = 200 if device_id in user.devices else 404
        if status != expected:
            stats.violation(f"{user.id}: GET notifications {device_id} -> {status}, expected {expected}")


async def bad_request(session, stats, base, user, oversized):
    """A request that must be refused with the given 4xx and change nothing."""
    rng = user.rng
    other = rng.choice(user.users)
    device_id = user.device_id(rng.randrange(3))
    cases = [
        ("bad: not JSON", "PUT", f"/v1/devices/{device_id}", user.headers, b'{"platform": "ios",', 400),
        ("bad: unknown field", "PUT", "/v1/me/settings", user.headers, {"pushesEnabled": True, "userId": other.id}, 400),
        ("bad: culture", "PUT", f"/v1/devices/{device_id}", user.headers,
         {"platform": "ios", "token": apns_token(rng), "culture": "russian"}, 400),
        ("bad: push token", "POST", "/Subscribe.ashx", user.headers,
         {"os": "ios", "culture": "ru-ru", "id": user.legacy_id(0), "uri": "qweasdzxc"}, 400),
        ("bad: no token", "GET", "/v1/me/settings", {"Content-Type": "application/json"}, None, 401),
        ("bad: forged token", "GET", "/v1/me/settings",
         {"Authorization": "Bearer " + token("not-the-secret-" * 3, user.id)}, None, 401),
        ("bad: too large", "PUT", "/v1/me/settings", user.headers, oversized, 413),
        ("bad: content type", "PUT", "/v1/me/settings", {**user.headers, "Content-Type": "text/plain"},
         b'{"pushesEnabled": false}', 415),
        ("bad: device id", "GET", "/v1/devices/" + "x" * 200, user.headers, None, 400),
        ("bad: method", "PATCH", f"/v1/devices/{device_id}", user.headers, None, 405),
        # Another user's device: invisible (404) and untouched.
        ("cross-user GET", "GET", f"/v1/devices/{other.device_id(0)}", user.headers, None, 404),
        ("cross-user DELETE", "DELETE", f"/v1/devices/{other.device_id(1)}", user.headers, None, 404),
        ("cross-user resend", "POST", f"/v1/devices/{other.device_id(2)}/notifications/resend", user.headers, {"after": 0}, 404),
    ]
    kind, method, path, headers, payload, expected = rng.choice(cases)
    if kind.startswith("cross-user") and other is user:
        return
    status, text = await call(session, stats, kind, method, base + path, headers, payload)
    if status != expected:
        stats.violation(f"{user.id}: {kind}: {method} {path} -> {status}, expected {expected}: {text[:200]!r}")


async def run_user(session, stats, base, user, deadline, bad_share, oversized):
    while time.monotonic() < deadline:
        try:
            if user.rng.random() < bad_share:
                await bad_request(session, stats, base, user, oversized)
            else:
                await good_request(session, stats, base, user)
        except (aiohttp.ClientError, asyncio.TimeoutError) as error:
            stats.status["transport error"] += 1
            stats.violation(f"{user.id}: transport error {error!r}")


async def sample_memory(pid, samples, stop):
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        samples.append(int(line.split()[1]) // 1024)
        except OSError:
            return
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except asyncio.TimeoutError:
            pass


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024
    return None


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def final_check(session, stats, base, users):
    """Reads back every user's devices and settings; and from the database, every subscription."""
    for user in users:
        for k in range(3):
            await check_device(session, stats, base, user, user.device_id(k), "final GET device")
        await check_settings(session, stats, base, user, "final GET settings")


def database_check(database_url, users, stats):
    rows = subprocess.run(
        ["psql", "-At", "-F", "\t", database_url, "-c",
         "SELECT d.device_id, u.user_id, coalesce(array_to_string(u.tags, ','), '*') FROM devices d JOIN device_users u ON u.device_ref = d.id"],
        check=True, capture_output=True, text=True).stdout.splitlines()
    owners = {}
    for user in users:
        for k in range(3):
            owners[user.device_id(k)] = user
            owners[user.legacy_id(k)] = user
    subscribed = defaultdict(set)
    for row in rows:
        device_id, user_id, tags = row.split("\t")
        subscribed[device_id].add(user_id)
        owner = owners.get(device_id)
        if owner is None or owner.id != user_id:
            stats.violation(f"database: {user_id} is subscribed on {device_id}, which is not theirs")
            continue
        if device_id.startswith("legacy-"):
            expected = owner.legacy.get(device_id)
            actual = "*" if tags == "*" else set(tags.split(","))
            if expected is None:
                stats.violation(f"database: {user_id} still subscribed on {device_id} after unsubscribing")
            elif actual != expected:
                stats.violation(f"database: {device_id} tags {tags}, expected {expected}")
    for user in users:
        for device_id in list(user.devices) + [d for d in user.legacy]:
            if user.id not in subscribed.get(device_id, set()):
                stats.violation(f"database: {user.id} lost its subscription on {device_id}")
    return len(rows)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--bad-share", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=11)
    arguments = parser.parse_args()

    stats = Stats()
    master = random.Random(arguments.seed)
    users = []
    for index in range(arguments.users):
        users.append(User(index, arguments.secret, random.Random(master.getrandbits(64)), users))
    oversized = json.dumps({"mutedTags": ["x" * 60] * 1200}).encode()  # > 64 KiB

    connector = aiohttp.TCPConnector(limit=arguments.users + 10)
    timeout = aiohttp.ClientTimeout(total=30)
    memory = []
    stop = asyncio.Event()
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        sampler = asyncio.create_task(sample_memory(arguments.pid, memory, stop))
        started = time.monotonic()
        api_cpu, client_cpu = cpu_seconds(arguments.pid), time.process_time()
        deadline = started + arguments.seconds
        await asyncio.gather(*(run_user(session, stats, arguments.url, user, deadline, arguments.bad_share, oversized) for user in users))
        elapsed = time.monotonic() - started
        api_cpu, client_cpu = cpu_seconds(arguments.pid) - api_cpu, time.process_time() - client_cpu
        stop.set()
        await sampler
        during = sum(len(v) for v in stats.latency.values())
        await final_check(session, stats, arguments.url, users)
    subscriptions = database_check(arguments.database_url, users, stats)

    print(f"users {arguments.users}, {elapsed:.1f} s, {during} requests ({during / elapsed:.0f}/s), bad share {arguments.bad_share}")
    print(f"CPU during the run: herald api {api_cpu / elapsed:.0%} of a core, this client {client_cpu / elapsed:.0%}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'request':24} {'count':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    everything = []
    for kind in sorted(stats.latency):
        values = stats.latency[kind]
        if not kind.startswith("final"):
            everything += values
        print(f"{kind:24} {len(values):7d} {percentile(values, 50) * 1000:8.1f} {percentile(values, 99) * 1000:8.1f} {max(values) * 1000:8.1f}")
    print(f"{'all (during the run)':24} {len(everything):7d} {percentile(everything, 50) * 1000:8.1f} "
          f"{percentile(everything, 99) * 1000:8.1f} {max(everything) * 1000:8.1f}")
    print("statuses:", dict(sorted(stats.status.items(), key=lambda item: str(item[0]))))
    server_errors = sum(count for status, count in stats.status.items() if isinstance(status, int) and status >= 500)
    print(f"5xx: {server_errors}; subscriptions in the database: {subscriptions}")
    if memory:
        print(f"herald api RSS every 10 s (MiB): {' '.join(str(value) for value in memory[::10])}; last {memory[-1]}, "
              f"peak (VmHWM) {peak_rss_mb(arguments.pid)} MiB")
    print(f"violations: {len(stats.violations)}")
    for line in stats.violations[:50]:
        print("  " + line)
    return 1 if stats.violations or server_errors else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
