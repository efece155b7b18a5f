"""Two librdkafka consumers (confluent-kafka-python) sharing one group.instance.id.

Usage: static-members.py BOOTSTRAP GROUP TOPIC INSTANCE_ID

Consumer "fence-a" joins and waits for its assignment; then "fence-b" joins with the
same group.instance.id, which makes it the instance's holder (KIP-345). The broker
must then fence fence-a: its next Heartbeat (or commit) is answered
FENCED_INSTANCE_ID, which librdkafka raises as a fatal error (an _FATAL event naming
the broker's error), after which it never rejoins. Every event is printed as one JSON line on stdout, for the test to read:

  {"event": "assigned"|"revoked", "consumer": ..., "partitions": [...]}
  {"event": "error", "consumer": ..., "code": ..., "name": ..., "fatal": ..., "text": ...}
  {"event": "replaced"}  fence-b holds the assignment and fence-a reported a fatal error
  {"event": "gave-up", "waiting-for": ...}  the deadline below passed first
  {"event": "closing"}  SIGTERM arrived; closing revokes fence-b's partitions

After "replaced" fence-b keeps consuming until SIGTERM, so the test can look at the
group from the broker's side while it is alive. The deadline only keeps a broken
broker from hanging the test; nothing is measured against it.
"""
import json
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaError

DEADLINE_S = 20
bootstrap, group, topic, instance = sys.argv[1:5]
stopping = False


def emit(**event):
    print(json.dumps(event), flush=True)


def stop(_signum, _frame):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, stop)


class Member:
    def __init__(self, name):
        self.name = name
        self.assigned = False
        self.fatal = False
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "group.instance.id": instance,
                "client.id": name,
                # The broker's group.min.session.timeout.ms is 6 s; heartbeat often so
                # the fencing answer comes soon after the replacement.
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 100,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "error_cb": self.on_error,
            }
        )
        self.consumer.subscribe([topic], on_assign=self.on_assign, on_revoke=self.on_revoke)

    def on_error(self, err):
        # librdkafka reports a fatal error as an event with code _FATAL, whose text
        # names the underlying broker error.
        fatal = err.fatal() or err.code() == KafkaError._FATAL
        self.fatal = self.fatal or fatal
        emit(
            event="error",
            consumer=self.name,
            code=err.code(),
            name=err.name(),
            fatal=fatal,
            text=err.str(),
        )

    def on_assign(self, _consumer, partitions):
        self.assigned = True
        emit(event="assigned", consumer=self.name, partitions=[p.partition for p in partitions])

    def on_revoke(self, _consumer, partitions):
        self.assigned = False
        emit(event="revoked", consumer=self.name, partitions=[p.partition for p in partitions])

    def poll(self):
        msg = self.consumer.poll(0.05)
        if msg is not None and msg.error() is not None:
            self.on_error(msg.error())


def poll_until(members, condition, what):
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if stopping or time.monotonic() > deadline:
            emit(event="gave-up", **{"waiting-for": what})
            sys.exit(1)
        for m in members:
            m.poll()


a = Member("fence-a")
poll_until([a], lambda: a.assigned, "fence-a's assignment")
b = Member("fence-b")
poll_until([a, b], lambda: b.assigned and a.fatal, "fence-b's assignment and fence-a's fencing")
emit(event="replaced")
while not stopping:
    a.poll()
    b.poll()
emit(event="closing")
b.consumer.close()
a.consumer.close()
