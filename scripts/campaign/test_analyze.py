"""Tests of the fault campaign's analyzer (analyze.py) on small recorded runs written here, in
the files campaign.py and analyze.py leave in a run folder. No services, no third-party
packages: `python3 -m pytest scripts/campaign` (or `python3 -m unittest discover scripts/campaign`).

The case that matters most: a run in which two pushes of one user arrive swapped, with no fault
and no evidence near them, must fail; the analyzer once charged such a violation to the nearest
fault and passed it.
"""

import datetime
import io
import json
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import analyze  # noqa: E402

RUN_ID = "crun1"
T0 = 1_790_000_000.0
USERS = 3
EVENTS = 30  # event n (1-based) is for user (n - 1) % USERS, published at T0 + n / 2


def iso(t):
    return datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def push_record(seq, platform, user, t, connection=1):
    """One line of the sandbox's record (`herald sandbox --record`) of an accepted push, which
    came on the sandbox's TCP connection number `connection` (one worker process's)."""
    text = f"Campaign event {seq} for {RUN_ID}"
    key = f"k{seq}-{platform}-{user}"
    if platform == "ios":
        return dict(provider="apns", token="%064x" % (analyze.IOS_BASE + user), headers={"apns-collapse-id": key}, body={"aps": {"alert": {"body": text}}}, time=iso(t), connection=connection)
    return dict(provider="fcm", token=f"campaign-fcm-{user}", headers={}, body={"message": {"data": {"dk": key}, "notification": {"body": text}}}, time=iso(t), connection=connection)


class RecordedRun:
    """A clean run's folder: every event delivered to both devices of its user 0.2 s after its
    publication, every push journaled, an empty dead-letter queue, two workers that started
    before the first event and logged nothing after."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.published = {n: T0 + n / 2 for n in range(1, EVENTS + 1)}
        self.accepted = {}  # event → when the broker accepted its first copy, if not at its publication
        self.user = {n: (n - 1) % USERS for n in self.published}
        self.pushes = [push_record(n, platform, self.user[n], t + 0.2) for n, t in self.published.items() for platform in ("ios", "android")]
        self.faults = []
        self.services = dict(queues={"w1.pushnotification": 0, "w1.pushnotification.dead": 0}, dead_letters=0, journal={"sent": 2 * EVENTS})
        self.journal_sent = [(n, f"cu{self.user[n]}-{platform}") for n in self.published for platform in ("ios", "android")]
        self.timeline = [dict(kind="worker-started", worker=w, t=T0 - 10) for w in (0, 1)]
        self.logs = {w: [dict(ts=iso(T0 - 9), level="info", message="Consuming partitions")] for w in (0, 1)}
        self.deferred = []  # (event, device id[, when its row was recorded deferred])
        self.postgres = dict(fsync="on", synchronous_commit="on", full_page_writes="on")
        self.args = None  # campaign.py's arguments (args.json), for a scaling run

    def push(self, seq, platform="ios"):
        return next(p for p in self.pushes if f"event {seq} " in json.dumps(p) and (p["provider"] == "apns") == (platform == "ios"))

    def swap(self, first, second, platform="ios"):
        """The test helper the issue asks for: the pushes of events `first` and `second` (one
        user's) to one device arrive the other way round."""
        assert self.user[first] == self.user[second]
        a, b = self.push(first, platform), self.push(second, platform)
        a["time"], b["time"] = b["time"], a["time"]

    def sent_by_another_process(self, seq, platform="ios"):
        """The push of event `seq` to the user's `platform` device came on a provider connection
        of another worker process (the sandbox's connection 2)."""
        self.push(seq, platform)["connection"] = 2

    def write(self):
        f = self.folder
        f.mkdir(parents=True, exist_ok=True)
        (f / "run.json").write_text(
            json.dumps(dict(run_id=RUN_ID, amqp=["amqp://127.0.0.1:1/"], database="postgres://127.0.0.1:1/herald", queue="w1.pushnotification",
                            cluster=False, published=EVENTS, republished=0, unconfirmed=0, postgres=self.postgres))
        )
        with open(f / "published.jsonl", "w") as out:
            for n, t in self.published.items():
                out.write(json.dumps(dict(seq=n, users=[self.user[n]], t=t, sent=t, confirmed=t + 0.01)) + "\n")
        with open(f / "witness.jsonl", "w") as out:
            for n, t in sorted(((n, self.accepted.get(n, t)) for n, t in self.published.items()), key=lambda x: x[1]):
                out.write(json.dumps(dict(id=f"{RUN_ID}-{n}", t=t)) + "\n")
        with open(f / "pushes.jsonl", "w") as out:
            for p in self.pushes:
                out.write(json.dumps(p) + "\n")
        (f / "faults.json").write_text(json.dumps(self.faults))
        if self.args is not None:
            (f / "args.json").write_text(json.dumps(self.args))
        (f / "workers.json").write_text(json.dumps(dict(peak_rss_kib=[1024, 1024], incarnations=[1, 1], unexpected_exits=[])))
        with open(f / "timeline.jsonl", "w") as out:
            for entry in self.timeline:
                out.write(json.dumps(entry) + "\n")
        for worker, lines in self.logs.items():
            with open(f / f"worker-{worker}.log", "w") as out:
                for line in lines:
                    out.write(json.dumps(line) + "\n")
        with open(f / "deferred.jsonl", "w") as out:
            for seq, device, *at in self.deferred:
                out.write(json.dumps(dict(seq=seq, device=device, t=at[0] if at else self.published[seq] + 0.1)) + "\n")
        (f / "services.json").write_text(json.dumps(self.services))
        if self.journal_sent is not None:
            with open(f / "journal-sent.tsv", "w") as out:
                for seq, device in self.journal_sent:
                    out.write(f"{seq}\t{device}\n")

    def analyze(self):
        self.write()
        with redirect_stdout(io.StringIO()):
            return analyze.analyze(self.folder, offline=True)


class AnalyzeTests(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = RecordedRun(Path(self.tmp.name) / "run")

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_clean_run_passes(self):
        s = self.run.analyze()
        self.assertTrue(s["passed"], s["failures"])
        self.assertEqual((s["lost"], s["order_violations"], s["journal_rows_missing"], s["dead_letters"]), (0, 0, 0, 0))
        self.assertIn("PASSED", (self.run.folder / "summary.md").read_text())

    def test_two_swapped_pushes_with_no_fault_near_them_fail(self):
        self.run.swap(4, 7)  # user 0's events 4 and 7, published 1.5 s apart
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["order_violations_unexplained"], 1)
        self.assertEqual(list(s["order_violations_unexplained_by_user"]), ["cu0-ios"])
        violation = s["order_violations_unexplained_by_user"]["cu0-ios"][0]
        self.assertEqual((violation["late_seq"], violation["after_seq"]), (4, 7))
        self.assertIn("cu0-ios: 4 after 7", (self.run.folder / "summary.md").read_text())

    def test_a_fault_nearby_is_no_evidence(self):
        """The old analyzer excused whatever arrived within 90 s of a fault; a provider outage
        whose breaker deferred nothing of this push's explains nothing."""
        self.run.faults = [dict(fault="provider-503-all", provider="apns", start=T0 + 1, end=T0 + 3, seconds=2)]
        self.run.swap(4, 7)
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["order_violations_unexplained"], 1)

    def test_an_owner_change_between_the_two_pushes_explains_their_swap(self):
        # Event 4 is published at T0 + 2 and, swapped, arrives at T0 + 3.7, after event 7's push
        # (T0 + 2.2), which the partition's next owner sent.
        self.run.logs[1].append(dict(ts=iso(T0 + 2.5), level="warning", message="Worker lost its broker connection; reconnecting"))
        self.run.swap(4, 7)
        self.run.sent_by_another_process(7)
        s = self.run.analyze()
        self.assertTrue(s["passed"], s["failures"])
        self.assertEqual(s["order_violations_explained"], {analyze.OWNER_CHANGE: 1})
        self.assertIn("worker 1", s["order_violations_explained_examples"][0]["evidence"])

    def test_a_worker_killed_between_the_two_pushes_is_an_owner_change(self):
        """The kill's moment is when the campaign sends the signal (its fault-start): the next
        owner may push before the process is noted gone."""
        self.run.timeline.append(dict(kind="fault-start", fault="worker-kill", worker=0, t=T0 + 2.1))
        self.run.swap(4, 7)
        self.run.sent_by_another_process(7)
        s = self.run.analyze()
        self.assertTrue(s["passed"], s["failures"])
        self.assertIn("worker-kill of worker 0", s["order_violations_explained_examples"][0]["evidence"])

    def test_two_pushes_one_process_sent_out_of_order_are_no_owner_changes(self):
        """Both came on the same provider connection, so from one process: however many
        workers reconnected meanwhile, the partition's owner did not change between them."""
        self.run.logs[1].append(dict(ts=iso(T0 + 2.5), level="warning", message="Worker lost its broker connection; reconnecting"))
        self.run.swap(4, 7)
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["order_violations_unexplained"], 1)

    def test_an_owner_change_after_the_later_push_arrived_explains_nothing(self):
        """Event 7's push arrived at T0 + 2.2; a change logged more than OWNER_CHANGE_SLACK later
        (still before event 4's late push, moved to T0 + 9) did not let it overtake."""
        self.run.swap(4, 7)
        self.run.push(4)["time"] = iso(T0 + 9)
        self.run.sent_by_another_process(7)
        self.run.logs[1].append(dict(ts=iso(T0 + 2.2 + analyze.OWNER_CHANGE_SLACK + 0.5), level="info", message="Consuming partitions"))
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["order_violations_unexplained"], 1)

    def test_an_owner_change_before_the_late_push_was_published_explains_nothing(self):
        self.run.timeline.append(dict(kind="worker-exited", worker=1, t=T0 + 0.5))
        self.run.swap(4, 7)
        self.assertFalse(self.run.analyze()["passed"])

    def test_an_event_the_broker_accepted_after_the_later_one_is_the_publishers(self):
        self.run.accepted = {4: T0 + 3.6}  # its channel lost, event 4 went again after event 7 (T0 + 3.5)
        self.run.swap(4, 7)
        s = self.run.analyze()
        self.assertTrue(s["passed"], s["failures"])
        self.assertEqual(s["order_violations_explained"], {analyze.PUBLISHER: 1})
        self.assertEqual(s["events_the_witness_missed"], 0)

    def test_an_event_the_broker_accepted_before_the_later_one_explains_nothing(self):
        self.run.accepted = {4: T0 + 3.4}
        self.run.swap(4, 7)
        self.assertFalse(self.run.analyze()["passed"])

    def test_a_witness_that_missed_the_later_events_copy_is_no_evidence(self):
        """The cluster run of 2026-12-02: the later event's first publish (given up on) reached the
        work queue, not the witness queue, and was pushed 29 s before the witness saw its resend,
        which came after the late event's (here 10.8 s)."""
        seen = T0 + 2.2 + analyze.WITNESS_SLACK + 0.8  # 7 was pushed at T0 + 2.2, 4 at T0 + 3.7
        self.run.accepted = {7: seen, 4: seen + 0.1}  # the witness: 7, then 4
        self.run.swap(4, 7)
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["order_violations_unexplained"], 1)
        self.assertEqual(s["events_pushed_before_the_witness_saw_them"], 2)  # 7, and 4 (its Android push)

    def test_when_the_publisher_began_its_publishes_is_no_evidence(self):
        """A run of 2026-12-02: the publisher's confirmed publish of the late event began 1.5 min
        after the later event's first one, which it had given up on (no confirm within 15 s) but
        which had reached the broker. Only the broker's order (the witness queue) counts."""
        self.run.swap(4, 7)
        self.run.write()
        published = [json.loads(line) for line in analyze.read_lines(self.run.folder / "published.jsonl")]
        for e in published:
            if e["seq"] == 4:
                e["sent"] = T0 + 90
        with open(self.run.folder / "published.jsonl", "w") as out:
            out.writelines(json.dumps(e) + "\n" for e in published)
        with redirect_stdout(io.StringIO()):
            s = analyze.analyze(self.run.folder, offline=True)
        self.assertFalse(s["passed"])
        self.assertEqual(s["order_violations_unexplained"], 1)

    def test_without_the_witness_queue_nothing_is_the_publishers(self):
        self.run.accepted = {4: T0 + 3.6}
        self.run.swap(4, 7)
        self.run.write()
        (self.run.folder / "witness.jsonl").unlink()
        with redirect_stdout(io.StringIO()):
            s = analyze.analyze(self.run.folder, offline=True)
        self.assertFalse(s["passed"])
        self.assertIsNone(s["events_the_witness_missed"])

    def test_a_deferral_excuses_nothing(self):
        """A breaker's deliveries wait in the backlog, in order: a late push whose journal row
        was seen deferred before the later push arrived is still a violation, and is counted."""
        self.run.deferred = [(4, "cu0-ios", T0 + 1.0)]
        self.run.swap(4, 7)
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["order_violations_unexplained"], 1)
        self.assertEqual(s["deliveries_deferred"], 1)

    def test_an_unreadable_dead_letter_queue_fails_the_run(self):
        self.run.services = dict(queues={"w1.pushnotification": 0}, journal={"sent": 2 * EVENTS}, broker_error="the dead-letter queue w1.pushnotification.dead could not be read")
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertTrue(any("dead-letter queue could not be read" in f for f in s["failures"]), s["failures"])

    def test_dead_letters_fail_the_run(self):
        self.run.services["dead_letters"] = 2
        self.assertFalse(self.run.analyze()["passed"])

    def test_an_accepted_push_without_its_journal_row_fails_the_run(self):
        self.run.journal_sent.remove((5, "cu1-android"))
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["journal_rows_missing"], 1)
        self.assertEqual(s["journal_rows_missing_examples"], [(5, "cu1-android")])

    def test_a_journal_that_could_not_be_read_fails_the_run(self):
        self.run.journal_sent = None
        self.run.services["database_error"] = "connection refused"
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertIsNone(s["journal_rows_missing"])

    def test_latency_counts_from_the_brokers_acceptance(self):
        """Event 4 waited 3 s in the publisher (the broker's flow control) and arrived 0.2 s
        after the broker took it: Herald's latency is the 0.2 s."""
        self.run.accepted = {4: T0 + 2 + 3}
        for platform in ("ios", "android"):
            self.run.push(4, platform)["time"] = iso(T0 + 5.2)
        s = self.run.analyze()
        self.assertEqual(s["latency_from"], "the broker's acceptance")
        self.assertAlmostEqual(s["latency_before_first_fault"]["max"], 0.2, places=3)
        self.assertAlmostEqual(s["publisher_wait"]["max"], 3, places=3)

    def test_a_lost_push_fails_the_run(self):
        self.run.pushes = [p for p in self.run.pushes if "event 9 " not in json.dumps(p)]
        self.run.journal_sent = [(n, d) for n, d in self.run.journal_sent if n != 9]
        s = self.run.analyze()
        self.assertFalse(s["passed"])
        self.assertEqual(s["lost"], 2)

    def scaled(self, shares_at):
        """A scaling run with 4 partitions: workers 0 and 1 take 0,1 and 2,3 at T0 - 8; worker 2
        joins at T0 + 2, and `shares_at` later workers 1 and 2 own 2 and 3."""
        self.run.args = dict(partitions=4, scale=True)
        self.run.timeline += [dict(kind="scale-change", live=[0, 1], t=T0 - 9), dict(kind="worker-started", worker=2, t=T0 + 2)]
        self.run.timeline.append(dict(kind="scale-change", live=[0, 1, 2], t=T0 + 2))
        owned = lambda t, parts: dict(ts=iso(t), level="info", message="Consuming partitions", **{"herald.partitions_owned": parts})  # noqa: E731
        self.run.logs[0].append(owned(T0 - 8, "0,1"))
        self.run.logs[1].append(owned(T0 - 8, "2,3"))
        self.run.logs[1].append(owned(T0 + 2 + shares_at, "2"))
        self.run.logs[2] = [owned(T0 + 2 + shares_at, "3")]
        return self.run.analyze()

    def test_a_scaling_run_whose_shares_are_taken_in_time_passes(self):
        s = self.scaled(shares_at=4)
        self.assertTrue(s["passed"], s["failures"])
        self.assertEqual([c["seconds"] for c in s["scale_changes"]], [1.0, 4.0])

    def test_a_share_not_taken_within_ten_seconds_fails_the_run(self):
        s = self.scaled(shares_at=12)
        self.assertFalse(s["passed"])
        self.assertAlmostEqual(s["scale_changes"][1]["seconds"], 12, places=3)
        self.assertIn("did not own their shares", " ".join(s["failures"]))

    def test_a_change_the_next_one_replaced_at_once_is_not_judged(self):
        # A rolling restart's step: worker 0 stops and starts again half a second later.
        self.run.args = dict(partitions=4, scale=True)
        owned = lambda t, parts: dict(ts=iso(t), level="info", message="Consuming partitions", **{"herald.partitions_owned": parts})  # noqa: E731
        self.run.logs[0].append(owned(T0 - 8, "0,1"))
        self.run.logs[1].append(owned(T0 - 8, "2,3"))
        self.run.timeline += [
            dict(kind="worker-exited", worker=0, t=T0 + 5), dict(kind="scale-change", live=[1], t=T0 + 5),
            dict(kind="worker-started", worker=0, t=T0 + 5.5), dict(kind="scale-change", live=[0, 1], t=T0 + 5.5),
        ]
        self.run.logs[0].append(owned(T0 + 7, "0,1"))
        s = self.run.analyze()
        self.assertTrue(s["passed"], s["failures"])
        self.assertEqual([(c["superseded"], c["seconds"]) for c in s["scale_changes"]], [(True, None), (False, 1.5)])


if __name__ == "__main__":
    unittest.main()
