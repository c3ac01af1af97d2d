"""Reads a fault-campaign run folder (campaign.py) and prints what Herald did with it.

Sources: `published.jsonl` (every event the broker confirmed: number, users, first publish
time, the time of the publish the broker confirmed),
`pushes.jsonl` (the sandbox's record of every push it accepted), `faults.json`, `workers.json`,
`timeline.jsonl`, the workers' JSON logs, `deferred.jsonl` (journal rows the campaign saw in
state 'deferred' during the run), `witness.jsonl` (the message-id of every event in the order the
broker accepted them, from a queue bound like the work queue), and, while the run's services are up, Herald's journal and
the dead-letter queue, which it records in `services.json` and `journal-sent.tsv` (with
--offline it reads them from there). Writes `summary.json` and `summary.md` into the folder and
prints the latter.

    .build-campaign-venv/bin/python scripts/campaign/analyze.py RUN_FOLDER [--offline]

A push names its event and run in its text ("Campaign event <n> for <run>"); its device token
names the user and platform; its collapse id is `apns-collapse-id` or FCM `data.dk`.

The run fails (exit status 1, `passed` false) on anything lost, shown twice or dead-lettered, a
dead-letter queue or journal it could not read, a push the providers accepted without its
journal row, or an order violation without evidence for its cause. A violation of a user's order
is excused only by evidence about that violation: the broker accepted its late event after the
later one (the witness queue's order: the publisher sent it again after a lost channel or a
confirm it gave up on); or partition ownership changed during the
late push's life (from its publication until it arrived: a worker started, exited or reconnected,
or the ingest changed hands, from the workers' logs and the campaign's timeline), before the
later push arrived (OWNER_CHANGE_SLACK), and the two pushes went out on different provider
connections (the sandbox numbers each TCP connection, and the proxy keeps them one to one, so one
connection is one process). The workers log that they (re)claimed partitions ("Consuming
partitions", with counts), not which ones: the owner-change evidence is per process, not per
partition. A circuit breaker excuses nothing: its deliveries wait in the backlog, in order; the
journal rows the campaign saw `deferred` (sent round the wait queue, where the backlog is off)
are counted.
"""

import argparse
import asyncio
import bisect
import collections
import datetime
import json
import re
import statistics
import sys
from pathlib import Path

TEXT = re.compile(rb"Campaign event (\d+) for ([A-Za-z0-9-]+)")
IOS_BASE = 0xC0FFEE0000000000

# The order exceptions docs/architecture.md ("Guarantees") and docs/operations.md ("Scaling
# out") document, each excused only with its own evidence (explain_violation).
OWNER_CHANGE = "owner change"
PUBLISHER = "resent by the publisher"
# What the workers log when their consumers of the partition queues (or the ingest) end or
# begin: every connection logs "Consuming" and, with partitions, "Consuming partitions"; a lost
# one "Worker lost its broker connection; reconnecting"; the ingest's new holder "Holding the
# ingest".
OWNERSHIP_LOG = re.compile(r"^Consuming|lost its broker connection|^Holding the ingest")
# The campaign's timeline entries for a worker process that ends or begins; a kill or a stop
# begins when the campaign sends the signal (its fault-start), before the process is gone.
OWNERSHIP_TIMELINE = {"worker-started", "worker-exited", "worker-died-unexpectedly"}
OWNERSHIP_FAULTS = {"worker-kill", "worker-stop"}
# The scaling run's bounds (issue 44): each live worker owns its share within this long of a
# change, and deliveries never stop for longer.
SCALE_BALANCE_LIMIT = 10.0
SCALE_GAP_LIMIT = 5.0
# How long after the later push arrived the evidence of an owner change may be logged: the new
# owner's standby consumer takes the partition when the old one's connection goes, before any
# line is logged; the old owner logs its lost connection and the campaign notes an exit within
# a fraction of a second, a claim walk is about 100 ms a partition.
OWNER_CHANGE_SLACK = 5.0
# How much later than an event's push the witness queue's consumer may record it (it reconnects
# after a broker fault as the workers do).
WITNESS_SLACK = 10.0
PROVIDER_FAULTS = {"provider-503-half", "provider-503-all", "provider-500-all", "provider-refuse", "provider-slow"}


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[k]


def fmt_s(v):
    return "—" if v is None else f"{v:.1f} s"


def read_lines(path, mode="r", **options):
    """The file's lines, the file closed once they are read (or the reader stops)."""
    with open(path, mode, **options) as file:
        yield from file


def load_published(folder):
    events = {}
    for line in read_lines(folder / "published.jsonl"):
        e = json.loads(line)
        events.setdefault(e["seq"], e)
    return events


def load_pushes(folder, run_id):
    """(seq, device) → list of (time, collapse id, connection), in record order, the connection
    being the provider and the sandbox's number of the TCP connection it came on; plus foreign
    records."""
    pushes = collections.defaultdict(list)
    foreign = 0
    total = 0
    path = folder / "pushes.jsonl"
    if not path.exists():
        return pushes, 0, 0
    for raw in read_lines(path, "rb"):
        total += 1
        m = TEXT.search(raw)
        if not m or m.group(2).decode() != run_id:
            foreign += 1
            continue
        r = json.loads(raw)
        token = r["token"]
        if r["provider"] == "apns":
            device = ("ios", int(token, 16) - IOS_BASE)
            collapse = r["headers"].get("apns-collapse-id")
        else:
            device = ("android", int(token.rsplit("-", 1)[1]))
            collapse = ((r.get("body") or {}).get("message", {}).get("data") or {}).get("dk")
        pushes[(int(m.group(1)), device)].append((parse_time(r["time"]), collapse, (r["provider"], r.get("connection"))))
    return pushes, total, foreign


def fault_at(faults, t, before=2, after=90):
    """The fault whose window [start − before, end + after] holds t (the nearest one)."""
    best = None
    for f in faults:
        if f["start"] - before <= t <= f["end"] + after:
            distance = 0 if f["start"] <= t <= f["end"] else min(abs(t - f["start"]), abs(t - f["end"]))
            if best is None or distance < best[0]:
                best = (distance, f)
    return best[1] if best else None


def worker_log_lines(folder):
    lines = []
    for path in sorted(folder.glob("worker-*.log")):
        worker = path.stem.split("-")[1]
        for raw in read_lines(path, errors="replace"):
            raw = raw.strip()
            if not raw.startswith("{"):
                continue
            try:
                entry = json.loads(raw)
                t = parse_time(entry["ts"]) if isinstance(entry.get("ts"), str) else float(entry.get("ts", 0))
            except (ValueError, KeyError, TypeError):
                continue
            lines.append((t, worker, entry.get("level", ""), entry.get("message", "")))
    lines.sort()
    return lines


def ownership_changes(folder, logs):
    """(time, what) of every moment a worker's consumers of the partition queues or the ingest
    ended or began, in time order: from the workers' logs and the campaign's timeline."""
    changes = [(t, f"worker {worker} logged \"{message}\"") for t, worker, _, message in logs if OWNERSHIP_LOG.search(message)]
    timeline = folder / "timeline.jsonl"
    if timeline.exists():
        for line in read_lines(timeline):
            entry = json.loads(line)
            if entry.get("kind") in OWNERSHIP_TIMELINE:
                changes.append((entry["t"], f"{entry['kind']} (worker {entry.get('worker')})"))
            elif entry.get("kind") == "fault-start" and entry.get("fault") in OWNERSHIP_FAULTS:
                changes.append((entry["t"], f"{entry['fault']} of worker {entry.get('worker')}"))
    changes.sort()
    return changes


def scale_balance(folder, partitions):
    """The scaling run (campaign.py --scale): for each change of the live workers, seconds until
    every live worker owns its share (⌊K/N⌋ or ⌈K/N⌉ partitions, each partition once, the others
    none), from the workers' "Consuming partitions" lines (`herald.partitions_owned`) and the
    timeline; None when it never did. Empty for another run."""
    timeline = folder / "timeline.jsonl"
    if not timeline.exists() or not partitions:
        return []
    events, changes = [], []
    for line in read_lines(timeline):
        entry = json.loads(line)
        if entry.get("kind") == "scale-change":
            changes.append((entry["t"], sorted(entry["live"])))
        elif entry.get("kind") in ("worker-started", "worker-exited"):
            events.append((entry["t"], entry["worker"], set()))  # owns nothing until it says so
    for path in sorted(folder.glob("worker-*.log")):
        worker = int(path.stem.split("-")[1])
        for raw in read_lines(path, errors="replace"):
            if '"Consuming partitions"' not in raw:
                continue
            entry = json.loads(raw)
            owned = entry.get("herald.partitions_owned", "")
            events.append((parse_time(entry["ts"]), worker, {int(p) for p in owned.split(",") if p}))
    events.sort(key=lambda e: e[0])

    def balanced(owned, live):
        n = len(live)
        shares = [len(owned.get(w, ())) for w in live]
        held = [p for w in live for p in owned.get(w, ())]
        return (
            n > 0 and all(partitions // n <= s <= -(-partitions // n) for s in shares) and sorted(held) == list(range(partitions))
            and not any(owned.get(w) for w in owned if w not in live)
        )

    results = []
    for index, (t, live) in enumerate(changes):
        # A change the next one replaced before the limit (a rolling restart's stop, then its
        # start) is not judged: that state was never meant to settle.
        following = changes[index + 1][0] if index + 1 < len(changes) else None
        owned, at, later = {}, None, iter(events)
        pending = next(later, None)
        while pending is not None and pending[0] <= t:  # the state as of the change
            owned[pending[1]] = pending[2]
            pending = next(later, None)
        if balanced(owned, live):
            at = t
        while at is None and pending is not None:
            owned[pending[1]] = pending[2]
            if balanced(owned, live):
                at = pending[0]
            pending = next(later, None)
        superseded = following is not None and following - t < SCALE_BALANCE_LIMIT and (at is None or at > following)
        results.append(dict(t=t, live=live, seconds=None if at is None or superseded else at - t, superseded=superseded))
    return results


def changes_gap(changes, number):
    """Seconds from change `number` (1-based) to the next."""
    return changes[number]["t"] - changes[number - 1]["t"]


def longest_delivery_gap(pushes, events):
    """The longest time without a push while events were being published (seconds)."""
    times = sorted(t for records in pushes.values() for t, _, _ in records)
    if not times or not events:
        return None
    first, last = min(e["t"] for e in events.values()), max(e["t"] for e in events.values())
    inside = [t for t in times if first <= t <= last + 1]
    return max((b - a for a, b in zip(inside, inside[1:])), default=None)


def load_witness(folder):
    """seq → the place of its first copy in the broker's order of arrival (`witness.jsonl`,
    written by campaign.py), and its time; None for a run recorded without it."""
    path = folder / "witness.jsonl"
    if not path.exists():
        return None
    first = {}
    with open(path) as lines:
        for place, line in enumerate(lines):
            entry = json.loads(line)
            seq = int(str(entry["id"]).rsplit("-", 1)[1])
            first.setdefault(seq, (place, entry["t"]))
    return first


def load_deferred(folder):
    """(seq, device id) → when the journal first recorded the delivery deferred, of every one
    the campaign saw deferred (none where the backlog is on)."""
    deferred = {}
    path = folder / "deferred.jsonl"
    if path.exists():
        with open(path) as lines:
            for line in lines:
                entry = json.loads(line)
                key = (entry["seq"], entry["device"])
                deferred[key] = min(entry["t"], deferred.get(key, entry["t"]))
    return deferred


def explain_violation(v, changes, change_times, witness):
    """The evidence that excuses the order violation `v` (its late push arrived after a later
    one), or None. The publisher: the broker accepted the late event's first copy after the
    later event's (the witness queue's order), so the work queue held them in that order; when
    the publisher's publish began says nothing (one it gave up on may have reached the broker,
    one it began may wait in the client). An owner change: a worker's partition
    consumers or the ingest ended or began after the late push's publication (less a second)
    and before the later push arrived (plus OWNER_CHANGE_SLACK; and before the late one
    arrived), and the two pushes came on different provider connections (one connection is one
    process: two pushes one process sent out of order are no owner change's)."""
    late, after = (witness or {}).get(v["late_seq"]), (witness or {}).get(v["after_seq"])
    # The witness saw each of the two no later than its push (WITNESS_SLACK): else it missed the
    # copy the work queue had (with quorum queues a publish the publisher gave up on may reach one
    # queue and not the other), or its consumer lagged (the campaign's process busy), and its
    # order, or its times, say nothing sure about them.
    faithful = late and after and late[1] <= v["arrived"] + WITNESS_SLACK and after[1] <= v["after_arrived"] + WITNESS_SLACK
    if faithful and late[0] > after[0]:
        return PUBLISHER, f"the broker accepted event {v['late_seq']} {late[1] - after[1]:.1f} s after event {v['after_seq']}"
    if v["late_connection"] == v["after_connection"]:
        return None, None
    at = bisect.bisect_left(change_times, v["published"] - 1)
    if at < len(change_times) and change_times[at] <= min(v["arrived"], v["after_arrived"] + OWNER_CHANGE_SLACK):
        t, what = changes[at]
        return OWNER_CHANGE, f"{what} {t - v['published']:+.1f} s after event {v['late_seq']} was published"
    return None, None


def device_name(device):
    """("ios", 5) → "cu5-ios", the device id campaign.py registers."""
    return f"cu{device[1]}-{device[0]}"


async def read_services(run):
    """The broker's queue depths (the dead-letter queue's among them), the journal's rows by
    state and the (event, device) of each sent row of this run; an error per service that could
    not be read."""
    result = {}
    try:
        import aiormq

        connection = await asyncio.wait_for(aiormq.connect(run["amqp"][0]), 10)
        channel = await connection.channel()
        queues = {}
        names = [run["queue"], run["queue"] + ".dead"] + [f"{run['queue']}.p{p}" for p in range(64)]
        for name in names:
            try:
                ok = await channel.queue_declare(name, passive=True)
                queues[name] = ok.message_count
            except Exception:
                channel = await connection.channel()
        result["queues"] = queues
        # Missing when it could not be read: a failure, not an empty queue.
        result["dead_letters"] = queues.get(run["queue"] + ".dead")
        if result["dead_letters"] is None:
            result["broker_error"] = f"the dead-letter queue {run['queue']}.dead could not be read"
        await connection.close()
    except Exception as error:
        result["broker_error"] = str(error)
    sent = []
    try:
        import psycopg

        with psycopg.connect(run["database"], connect_timeout=10) as db:
            result["journal"] = dict(db.execute("SELECT state, count(*) FROM journal GROUP BY state").fetchall())
            result["failed_errors"] = [
                list(r) for r in db.execute("SELECT last_error, count(*) FROM journal WHERE state IN ('failed','pending') GROUP BY 1 ORDER BY 2 DESC LIMIT 5").fetchall()
            ]
            result["messages"] = db.execute("SELECT count(*) FROM messages").fetchone()[0]
            rows = db.execute(
                "SELECT m.key_text, d.device_id FROM journal j JOIN messages m ON m.id = j.message_id JOIN devices d ON d.id = j.device_ref "
                "WHERE j.state = 'sent' AND m.key_text LIKE %s",
                (run["run_id"] + "-%",),
            )
            sent = [(int(key.rsplit("-", 1)[1]), device) for key, device in rows]
    except Exception as error:
        result["database_error"] = str(error)
        sent = None
    return result, sent


def record_services(folder, services, sent):
    (folder / "services.json").write_text(json.dumps(services, indent=2, default=str))
    if sent is not None:
        with open(folder / "journal-sent.tsv", "w") as f:
            for seq, device in sent:
                f.write(f"{seq}\t{device}\n")


def load_services(folder):
    """What read_services recorded for the run, for an analysis without its services."""
    path = folder / "services.json"
    if not path.exists():
        return {"broker_error": "not recorded (services.json missing)", "database_error": "not recorded (services.json missing)"}, None
    services = json.loads(path.read_text())
    sent_path = folder / "journal-sent.tsv"
    sent = None
    if sent_path.exists():
        sent = []
        for line in read_lines(sent_path):
            seq, device = line.rstrip("\n").split("\t")
            sent.append((int(seq), device))
    return services, sent


def analyze(folder: Path, offline=False):
    run = json.loads((folder / "run.json").read_text())
    faults = json.loads((folder / "faults.json").read_text()) if (folder / "faults.json").exists() else []
    workers = json.loads((folder / "workers.json").read_text()) if (folder / "workers.json").exists() else {}
    events = load_published(folder)
    pushes, recorded_total, foreign = load_pushes(folder, run["run_id"])

    witness = load_witness(folder)
    # Each event's time for the latencies and the faults' windows: when the broker accepted it
    # (the witness queue's first copy), else when the publisher first sent it. Under the broker's
    # flow control a publish waits in the publisher, sometimes minutes with its resends: the
    # publisher's wait, not Herald's.
    accepted = {seq: witness[seq][1] if witness and seq in witness else e["t"] for seq, e in events.items()}
    publisher_wait = [accepted[seq] - e["t"] for seq, e in events.items()] if witness else []
    expected = {}
    for seq, e in events.items():
        for u in e["users"]:
            for platform in ("ios", "android"):
                expected[(seq, (platform, u))] = accepted[seq]

    delivered = lost = visible_duplicates = repeats = 0
    first_arrival = {}
    first_connection = {}  # of the first arrival
    lost_examples = []
    for key, publish_t in expected.items():
        records = pushes.get(key)
        if not records:
            lost += 1
            if len(lost_examples) < 10:
                lost_examples.append(dict(seq=key[0], device=f"cu{key[1][1]}-{key[1][0]}", published=publish_t))
            continue
        delivered += 1
        collapse_ids = {c for _, c, _ in records}
        if len(collapse_ids) > 1:
            visible_duplicates += 1
        repeats += len(records) - len(collapse_ids)
        first_arrival[key], _, first_connection[key] = min(records, key=lambda r: r[0])
    unexpected = sum(1 for key in pushes if key not in expected)

    # Latency per delivery: first arrival − publish time.
    latency = {key: first_arrival[key] - expected[key] for key in first_arrival}

    def calm(t):
        return fault_at(faults, t, before=5, after=60) is None

    baseline = {p: [v for (seq, (pl, _)), v in latency.items() if pl == p and calm(expected[(seq, (pl, _))])] for p in ("ios", "android")}
    # Before the first fault: the latency of the healthy system, the recovery threshold's base.
    first_fault = min((f["start"] for f in faults), default=float("inf"))
    warm = [v for key, v in latency.items() if expected[key] < first_fault - 2]

    # Per-user-and-platform order: each device's first arrivals in time order.
    per_device = collections.defaultdict(list)
    for (seq, device), t in first_arrival.items():
        per_device[device].append((t, seq))
    violations = []
    for device, arrivals in per_device.items():
        arrivals.sort()
        highest = None
        for t, seq in arrivals:
            if highest is not None and seq < highest[1]:
                violations.append(dict(
                    device=device_name(device), platform=device[0], late_seq=seq, published=events[seq]["t"], arrived=t, after_seq=highest[1], after_arrived=highest[0],
                    late_connection=first_connection[(seq, device)], after_connection=first_connection[(highest[1], device)],
                ))
            if highest is None or seq > highest[1]:
                highest = (t, seq)
    logs = worker_log_lines(folder)
    changes = ownership_changes(folder, logs)
    change_times = [t for t, _ in changes]
    by_exception = collections.Counter()
    unexplained = collections.defaultdict(list)
    for v in violations:
        v["exception"], v["evidence"] = explain_violation(v, changes, change_times, witness)
        by_exception[v["exception"]] += 1
        if v["exception"] is None:
            unexplained[v["device"]].append(v)

    # The healthy provider during each provider fault, and recovery after every fault.
    platform_of = {"apns": "ios", "fcm": "android"}
    per_fault = []
    by_publish = sorted((expected[k], v, k[1][0]) for k, v in latency.items())
    publish_times = [x[0] for x in by_publish]
    threshold = max(2.0, 3 * (percentile(warm, 99) or 0))
    for f in faults:
        row = dict(fault=f["fault"], start=f["start"], seconds=round(f["end"] - f["start"], 1))
        row.update({k: v for k, v in f.items() if k in ("provider", "worker", "node")})
        lo, hi = bisect.bisect_left(publish_times, f["start"]), bisect.bisect_right(publish_times, f["end"])
        during = by_publish[lo:hi]
        if f["fault"] in PROVIDER_FAULTS:
            failing = platform_of[f["provider"]]
            healthy = [v for _, v, pl in during if pl != failing]
            row["healthy_max_wait"] = max(healthy) if healthy else None
            # What the outage added: the healthy provider's longest wait minus its longest wait
            # for events published in the minute before (a backlog from earlier faults).
            plo = bisect.bisect_left(publish_times, f["start"] - 60)
            before = [v for _, v, pl in by_publish[plo:lo] if pl != failing]
            row["healthy_wait_before"] = max(before) if before else None
            if healthy and before:
                row["healthy_added_wait"] = max(0.0, max(healthy) - max(before))
            row["healthy_p99_wait"] = percentile(healthy, 99)
            row["failing_max_wait"] = max((v for _, v, pl in during if pl == failing), default=None)
            lost_during = sum(1 for k, t in expected.items() if f["start"] <= t <= f["end"] and k not in first_arrival)
            row["lost_of_events_published_during"] = lost_during
        else:
            row["max_wait"] = max((v for _, v, _ in during), default=None)
        # Recovery: from the fault's end until events published stay under the threshold for 10 s.
        start = bisect.bisect_left(publish_times, f["end"])
        buckets = collections.defaultdict(float)
        for t, v, _ in by_publish[start:]:
            if t > f["end"] + 600:
                break
            b = int(t - f["end"])
            buckets[b] = max(buckets[b], v)
        recovery = None
        for b in range(0, 600):
            window = [buckets.get(x) for x in range(b, b + 10)]
            if all(w is not None and w < threshold for w in window if w is not None) and any(w is not None for w in window):
                recovery = b
                break
        row["recovery_s"] = recovery
        row["measured_until_s"] = max(buckets) if buckets else None
        per_fault.append(row)

    log_times = [x[0] for x in logs]
    routine = {"Consuming", "Consuming partitions", "APNs sender ready", "FCM sender ready"}
    for n, (row, f) in enumerate(zip(per_fault, faults)):
        # From the fault's start to 60 s after its end, or to the next fault's start.
        until = min([f["end"] + 60] + [g["start"] for g in faults[n + 1:]])
        lo, hi = bisect.bisect_left(log_times, f["start"] - 1), bisect.bisect_right(log_times, until)
        counter = collections.Counter((lvl, msg[:140]) for _, _, lvl, msg in logs[lo:hi] if lvl != "debug" and lvl != "trace" and msg not in routine)
        row["logged"] = [dict(level=l, message=m, count=c) for (l, m), c in counter.most_common(6)]

    if offline:
        services, sent = load_services(folder)
    else:
        services, sent = asyncio.run(read_services(run))
        record_services(folder, services, sent)
    # Every push the providers accepted has its journal row in state 'sent'.
    missing_rows = None
    if sent is not None:
        journaled = set(sent)
        missing_rows = sorted((seq, device_name(device)) for (seq, device) in pushes if (seq, device_name(device)) not in journaled)
    healthy_waits = [r["healthy_max_wait"] for r in per_fault if r.get("healthy_max_wait") is not None]
    healthy_added = [r["healthy_added_wait"] for r in per_fault if r.get("healthy_added_wait") is not None]
    summary = dict(
        run_id=run["run_id"], cluster=run.get("cluster"),
        events_published=len(events), publisher_republished=run.get("republished"), publisher_unconfirmed=run.get("unconfirmed"),
        deliveries_expected=len(expected), delivered=delivered, lost=lost, lost_examples=lost_examples,
        user_visible_duplicates=visible_duplicates, repeats_same_collapse_id=repeats, unexpected_pushes=unexpected,
        records_total=recorded_total, records_of_other_runs=foreign,
        order_violations=len(violations),
        order_violations_explained={e: c for e, c in by_exception.items() if e is not None},
        order_violations_unexplained=sum(len(v) for v in unexplained.values()),
        order_violations_unexplained_by_user={device: items for device, items in sorted(unexplained.items())},
        order_violations_explained_examples=[v for v in violations if v["exception"] is not None][:10],
        deliveries_deferred=len(load_deferred(folder)),
        events_the_witness_missed=None if witness is None else sum(1 for seq in events if seq not in witness),
        events_pushed_before_the_witness_saw_them=None if witness is None else len(
            {seq for (seq, _), t in first_arrival.items() if seq in witness and witness[seq][1] > t + WITNESS_SLACK}
        ),
        journal_rows_missing=None if missing_rows is None else len(missing_rows),
        journal_rows_missing_examples=(missing_rows or [])[:10],
        postgres=run.get("postgres"),
        dead_letters=services.get("dead_letters"), queues_at_end=services.get("queues"),
        journal=services.get("journal"), journal_failed_errors=services.get("failed_errors"),
        peak_rss_mib=[round(k / 1024, 1) for k in workers.get("peak_rss_kib", [])], worker_incarnations=workers.get("incarnations"),
        worker_unexpected_exits=workers.get("unexpected_exits", []),
        longest_healthy_provider_wait=max(healthy_waits) if healthy_waits else None,
        longest_healthy_provider_added_wait=max(healthy_added) if healthy_added else None,
        baseline_latency={p: dict(p50=percentile(v, 50), p99=percentile(v, 99), max=max(v) if v else None, n=len(v)) for p, v in baseline.items()},
        recovery_threshold_s=threshold,
        latency_from="the broker's acceptance" if witness else "the publisher's first publish",
        publisher_wait=dict(p50=percentile(publisher_wait, 50), p99=percentile(publisher_wait, 99), max=max(publisher_wait, default=None)),
        latency_before_first_fault=dict(p50=percentile(warm, 50), p99=percentile(warm, 99), max=max(warm) if warm else None, n=len(warm)),
        faults=per_fault,
        scale_changes=scale_balance(folder, json.loads((folder / "args.json").read_text()).get("partitions") if (folder / "args.json").exists() else None),
        longest_delivery_gap_s=longest_delivery_gap(pushes, events),
        errors={k: v for k, v in services.items() if k.endswith("_error")},
    )
    summary["failures"] = failures(summary)
    summary["passed"] = not summary["failures"]
    (folder / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    md = render(summary)
    (folder / "summary.md").write_text(md)
    print(md)
    return summary


def failures(s):
    """Why the run fails; empty when it passes."""
    out = []
    if s["lost"]:
        out.append(f"{s['lost']} deliveries lost")
    if s["user_visible_duplicates"]:
        out.append(f"{s['user_visible_duplicates']} user-visible duplicates")
    if s["dead_letters"] is None:
        out.append(f"the dead-letter queue could not be read ({s['errors'].get('broker_error', 'no reading')})")
    elif s["dead_letters"]:
        out.append(f"{s['dead_letters']} dead letters")
    if s["journal_rows_missing"] is None:
        out.append(f"the journal could not be read ({s['errors'].get('database_error', 'no reading')})")
    elif s["journal_rows_missing"]:
        durable = s.get("postgres") and all(v == "on" for v in s["postgres"].values())
        note = "" if durable else " (PostgreSQL did not write durably: an immediate stop also loses committed rows)"
        out.append(f"{s['journal_rows_missing']} pushes the providers accepted have no 'sent' journal row{note}")
    for change in s.get("scale_changes", []):
        if not change["superseded"] and (change["seconds"] is None or change["seconds"] > SCALE_BALANCE_LIMIT):
            out.append(f"workers {change['live']} did not own their shares within {SCALE_BALANCE_LIMIT:.0f} s ({fmt_s(change['seconds'])})")
    if s.get("scale_changes") and (s["longest_delivery_gap_s"] or 0) > SCALE_GAP_LIMIT:
        out.append(f"deliveries stopped for {fmt_s(s['longest_delivery_gap_s'])} (more than {SCALE_GAP_LIMIT:.0f} s)")
    if s["order_violations_unexplained"]:
        users = len(s["order_violations_unexplained_by_user"])
        out.append(f"{s['order_violations_unexplained']} order violations without evidence for their cause, on {users} devices")
    return out


def render(s):
    out = []
    w = out.append
    w(f"Run {s['run_id']} ({'3-node cluster, quorum queues' if s['cluster'] else 'one broker, classic queues'})\n")
    w("| what | value |")
    w("|---|---:|")
    w(f"| events published (confirmed by the broker) | {s['events_published']:,} |")
    w(f"| deliveries expected | {s['deliveries_expected']:,} |")
    w(f"| delivered (event and device seen by the sandbox) | {s['delivered']:,} |")
    w(f"| **lost** | **{s['lost']:,}** |")
    w(f"| **user-visible duplicates** (same event, same device, two collapse ids) | **{s['user_visible_duplicates']:,}** |")
    w(f"| repeats with the same collapse id | {s['repeats_same_collapse_id']:,} |")
    w(f"| pushes nobody asked for | {s['unexpected_pushes']:,} |")
    w(f"| per-user-and-platform order violations | {s['order_violations']:,} |")
    explained = ", ".join(f"{c:,} {e}" for e, c in s["order_violations_explained"].items()) or "none"
    w(f"| of which explained by their own evidence | {explained} |")
    w(f"| **order violations without evidence** | **{s['order_violations_unexplained']:,}** |")
    w(f"| deliveries deferred round the wait queue (journal rows seen `deferred`) | {s.get('deliveries_deferred', 0):,} |")
    missed = s["events_the_witness_missed"]
    w(f"| confirmed events the witness queue did not see | {'not recorded' if missed is None else f'{missed:,}'} |")
    early = s["events_pushed_before_the_witness_saw_them"]
    w(f"| events pushed more than {WITNESS_SLACK:.0f} s before the witness saw them (it missed a copy, or its consumer lagged) | {'not recorded' if early is None else f'{early:,}'} |")
    w(f"| **dead letters** | **{'unreadable' if s['dead_letters'] is None else s['dead_letters']}** |")
    missing = s["journal_rows_missing"]
    w(f"| **pushes accepted without their journal row** | **{'unreadable' if missing is None else f'{missing:,}'}** |")
    pg = s.get("postgres")
    w(f"| PostgreSQL fsync / synchronous_commit / full_page_writes | {' / '.join(pg.values()) if pg else 'not recorded'} |")
    w(f"| journal rows by state | {s['journal']} |")
    w(f"| peak RSS per worker slot | {', '.join(f'{m} MiB' for m in s['peak_rss_mib'])} |")
    w(f"| worker processes started per slot | {s['worker_incarnations']} |")
    w(f"| workers that exited on their own (crashes) | {len(s['worker_unexpected_exits'])} |")
    w(f"| **longest wait of the healthy provider** during the other's outage | **{fmt_s(s['longest_healthy_provider_wait'])}** |")
    w(f"| of which added by the outage (minus its longest wait in the minute before) | **{fmt_s(s['longest_healthy_provider_added_wait'])}** |")
    b = s["publisher_wait"]
    w(f"| the publisher's first publish to the broker's acceptance | p50 {fmt_s(b['p50'])}, p99 {fmt_s(b['p99'])}, max {fmt_s(b['max'])} |")
    w(f"| latencies and waits below are from | {s['latency_from']} to the push |")
    b = s["latency_before_first_fault"]
    w(f"| latency before the first fault | p50 {fmt_s(b['p50'])}, p99 {fmt_s(b['p99'])}, max {fmt_s(b['max'])} ({b['n']:,}) |")
    for p, b in s["baseline_latency"].items():
        w(f"| latency away from faults (60 s after each), {p} | p50 {fmt_s(b['p50'])}, p99 {fmt_s(b['p99'])}, max {fmt_s(b['max'])} ({b['n']:,}) |")
    w("")
    if s["order_violations_unexplained_by_user"]:
        w("Order violations without evidence, by device (event that arrived late → after which later event):\n")
        for device, items in s["order_violations_unexplained_by_user"].items():
            w(f"- {device}: " + "; ".join(f"{v['late_seq']} after {v['after_seq']} (+{v['arrived'] - v['after_arrived']:.1f} s)" for v in items))
        w("")
    if s["order_violations_explained_examples"]:
        w("Order violations explained (first ones): " + "; ".join(f"{v['device']} {v['late_seq']} after {v['after_seq']}: {v['evidence']}" for v in s["order_violations_explained_examples"]))
        w("")
    w(f"Faults (recovery: from the fault's end until events published stay under {s['recovery_threshold_s']:.1f} s to the device for 10 s):\n")
    w("| # | fault | target | lasted | max wait (healthy provider / failing / all) | lost of events published during | recovery |")
    w("|---:|---|---|---:|---|---:|---:|")
    for i, f in enumerate(s["faults"], 1):
        target = f.get("provider") or (f"worker {f['worker']}" if "worker" in f else (f"node {f['node']}" if "node" in f else ""))
        if "healthy_max_wait" in f:
            wait = f"healthy {fmt_s(f['healthy_max_wait'])} (before: {fmt_s(f['healthy_wait_before'])}) / failing {fmt_s(f['failing_max_wait'])}"
        else:
            wait = f"all {fmt_s(f.get('max_wait'))}"
        recovery = fmt_s(f["recovery_s"]) if f["recovery_s"] is not None else f"> {f['measured_until_s']} s (not in the run)"
        w(f"| {i} | {f['fault']} | {target} | {f['seconds']} s | {wait} | {f.get('lost_of_events_published_during', '')} | {recovery} |")
    w("")
    w("What the workers logged in each fault's window (its start to 60 s after its end or the next fault), most frequent first:\n")
    for i, f in enumerate(s["faults"], 1):
        if f["logged"]:
            w(f"- {i} {f['fault']}: " + "; ".join(f"{l['count']}× {l['level']} \"{l['message']}\"" for l in f["logged"][:4]))
    if s.get("scale_changes"):
        w(f"\nThe scaling run: seconds from each change to every live worker owning its share (limit {SCALE_BALANCE_LIMIT:.0f} s); "
          f"longest time without a push while publishing: {fmt_s(s['longest_delivery_gap_s'])} (limit {SCALE_GAP_LIMIT:.0f} s)\n")
        w("| # | live workers | balanced after |")
        w("|---|---|---:|")
        for i, change in enumerate(s["scale_changes"], 1):
            after = f"replaced by the next change after {fmt_s(changes_gap(s['scale_changes'], i))}" if change["superseded"] else fmt_s(change["seconds"])
            w(f"| {i} | {', '.join(map(str, change['live']))} | {after} |")
    if s["lost_examples"]:
        w("\nLost (first ones): " + ", ".join(f"{x['seq']}→{x['device']}" for x in s["lost_examples"]))
    if s["journal_failed_errors"]:
        w(f"\nJournal rows failed or pending, by error: {s['journal_failed_errors']}")
    if s["journal_rows_missing_examples"]:
        w("\nPushes without their journal row (first ones): " + ", ".join(f"{seq}→{device}" for seq, device in s["journal_rows_missing_examples"]))
    if s["errors"]:
        w(f"\nCould not read: {s['errors']}")
    w("\n" + ("PASSED" if s["passed"] else "FAILED: " + "; ".join(s["failures"])))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--offline", action="store_true", help="without the broker and the database: what services.json and journal-sent.tsv recorded")
    args = parser.parse_args()
    summary = analyze(Path(args.folder), offline=args.offline)
    sys.exit(0 if summary["passed"] else 1)
