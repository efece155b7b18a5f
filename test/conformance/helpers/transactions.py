"""librdkafka's transactional API (confluent-kafka-python) against a broker.

Usage: transactions.py BOOTSTRAP SCENARIO

Scenarios, each printing one JSON line per event on stdout for the test to read, and
{"event": "done"} at the end (an exception prints {"event": "failed", ...} and exits 1):

  commit-abort  a producer commits a transaction to orders-payment and audit-log,
                then aborts one; read_committed and read_uncommitted consumers read
                both topics to their end: {"event": "read", "isolation", "topic",
                "values": [...]} (control records would show as values; none must)
  ctp           consume-transform-produce: reads ctp-in (read_committed, no auto
                commit), writes upper-cased values to ctp-out and commits the input
                offsets with send_offsets_to_transaction; {"event": "committed",
                "offset": ...} is the group's committed offset afterwards
  fence         producer A opens a transaction; producer B initialises the same
                transactional.id; A's commit fails: {"event": "fenced", "fatal",
                "code", "name", "str"}; B then commits its own transaction

The deadlines only keep a broken broker from hanging the test; nothing is measured.
"""
import json
import sys
import traceback

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

TIMEOUT_S = 20
bootstrap, scenario = sys.argv[1:3]


def emit(**event):
    print(json.dumps(event), flush=True)


def producer(txn_id):
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "transaction.timeout.ms": 60000})
    p.init_transactions(TIMEOUT_S)
    return p


def read_to_end(topic, isolation):
    """Every value of the topic's partition 0, from the beginning to its end."""
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": f"reader-{topic}-{isolation}",
        "isolation.level": isolation,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "enable.partition.eof": True,
    })
    c.assign([TopicPartition(topic, 0, 0)])
    values = []
    try:
        while True:
            m = c.poll(TIMEOUT_S)
            if m is None:
                raise RuntimeError(f"no end of {topic} within {TIMEOUT_S}s")
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    break
                raise KafkaException(m.error())
            values.append(None if m.value() is None else m.value().decode())
    finally:
        c.close()
    emit(event="read", isolation=isolation, topic=topic, values=values)


def commit_abort():
    p = producer("py-orders")
    p.begin_transaction()
    p.produce("orders-payment", value=b"payment-1", key=b"o1")
    p.produce("orders-payment", value=b"payment-2", key=b"o2")
    p.produce("audit-log", value=b"audit-1")
    p.commit_transaction(TIMEOUT_S)
    p.begin_transaction()
    p.produce("orders-payment", value=b"aborted-payment", key=b"o3")
    p.produce("audit-log", value=b"aborted-audit")
    p.flush(TIMEOUT_S)
    p.abort_transaction(TIMEOUT_S)
    p.begin_transaction()
    p.produce("audit-log", value=b"audit-2")
    p.commit_transaction(TIMEOUT_S)
    for isolation in ("read_committed", "read_uncommitted"):
        for topic in ("orders-payment", "audit-log"):
            read_to_end(topic, isolation)


def ctp():
    seed = Producer({"bootstrap.servers": bootstrap})
    for v in (b"a", b"b", b"c"):
        seed.produce("ctp-in", value=v)
    seed.flush(TIMEOUT_S)
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "ctp-group",
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    c.subscribe(["ctp-in"])
    p = producer("py-ctp")
    seen = []
    while len(seen) < 3:
        m = c.poll(TIMEOUT_S)
        if m is None:
            raise RuntimeError("ctp-in not consumed in time")
        if m.error():
            raise KafkaException(m.error())
        seen.append(m)
    p.begin_transaction()
    for m in seen:
        p.produce("ctp-out", value=m.value().upper())
    p.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(), TIMEOUT_S)
    p.commit_transaction(TIMEOUT_S)
    committed = c.committed([TopicPartition("ctp-in", 0)], TIMEOUT_S)
    emit(event="committed", offset=committed[0].offset)
    c.close()
    read_to_end("ctp-out", "read_committed")


def fence():
    a = producer("py-fenced")
    a.begin_transaction()
    a.produce("fenced-topic", value=b"from-a")
    a.flush(TIMEOUT_S)
    b = producer("py-fenced")
    try:
        a.produce("fenced-topic", value=b"from-a-again")
        a.commit_transaction(TIMEOUT_S)
        emit(event="not-fenced")
    except KafkaException as e:
        err = e.args[0]
        emit(event="fenced", fatal=err.fatal(), code=err.code(), name=err.name(), str=err.str())
    b.begin_transaction()
    b.produce("fenced-topic", value=b"from-b")
    b.commit_transaction(TIMEOUT_S)
    read_to_end("fenced-topic", "read_committed")


try:
    {"commit-abort": commit_abort, "ctp": ctp, "fence": fence}[scenario]()
    emit(event="done")
except Exception as e:  # noqa: BLE001 - reported to the test, which fails on it
    emit(event="failed", error=repr(e), trace=traceback.format_exc())
    sys.exit(1)
