"""librdkafka 2.0 (confluent-kafka-python, Debian's, system Python) against the broker:
topic configs through AdminClient, INVALID_TIMESTAMP delivery reports, and
ListConsumerGroups (not wrapped by confluent-kafka-python 1.7, so called through
ctypes on the same librdkafka). Prints one JSON line per observation, then done."""
import ctypes
import json
import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

bootstrap, scenario = sys.argv[1], sys.argv[2]
admin = AdminClient({'bootstrap.servers': bootstrap})


def emit(event, **fields):
    print(json.dumps({'event': event, **fields}), flush=True)


def create(name, config):
    futures = admin.create_topics([NewTopic(name, 1, 1, config=config)])
    try:
        futures[name].result(15)
        return None
    except Exception as e:  # the KafkaException carries the broker's error
        return str(e)


if scenario == 'configs':
    config = json.loads(sys.argv[3])
    emit('created', error=create('every-config', config))
    emit('created', error=create('bare-config', {}))
    for topic in ('every-config', 'bare-config'):
        described = admin.describe_configs([ConfigResource('topic', topic)])
        entries = list(described.values())[0].result(15)
        emit('described', topic=topic, entries={
            name: {'value': e.value, 'source': e.source, 'is_default': e.is_default}
            for name, e in entries.items()})
    emit('refused', error=create('tiered', {'remote.storage.enable': 'true'}))
elif scenario == 'timestamps':
    emit('created', error=create('ts-bounds', {'message.timestamp.before.max.ms': '60000'}))
    p = Producer({'bootstrap.servers': bootstrap, 'linger.ms': 100})
    reports = []
    now = int(time.time() * 1000)
    for value, ts in (('old', now - 3600000), ('fresh', now)):
        p.produce('ts-bounds', value=value, timestamp=ts,
                  on_delivery=lambda err, msg: reports.append(
                      (msg.value().decode(), None if err is None else err.name())))
        p.flush(15)
    for value, error in reports:
        emit('delivery', value=value, error=error)
elif scenario == 'list-groups':
    lib = ctypes.CDLL('librdkafka.so.1')
    P = ctypes.c_void_p
    for name, res, args in [
        ('rd_kafka_conf_new', P, []),
        ('rd_kafka_conf_set', ctypes.c_int, [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]),
        ('rd_kafka_new', P, [ctypes.c_int, P, ctypes.c_char_p, ctypes.c_size_t]),
        ('rd_kafka_queue_new', P, [P]),
        ('rd_kafka_AdminOptions_new', P, [P, ctypes.c_int]),
        ('rd_kafka_AdminOptions_set_match_consumer_group_states', P, [P, ctypes.POINTER(ctypes.c_int), ctypes.c_size_t]),
        ('rd_kafka_ListConsumerGroups', None, [P, P, P]),
        ('rd_kafka_queue_poll', P, [P, ctypes.c_int]),
        ('rd_kafka_event_ListConsumerGroups_result', P, [P]),
        ('rd_kafka_ListConsumerGroups_result_valid', ctypes.POINTER(P), [P, ctypes.POINTER(ctypes.c_size_t)]),
        ('rd_kafka_ListConsumerGroups_result_errors', ctypes.POINTER(P), [P, ctypes.POINTER(ctypes.c_size_t)]),
        ('rd_kafka_ConsumerGroupListing_group_id', ctypes.c_char_p, [P]),
        ('rd_kafka_ConsumerGroupListing_state', ctypes.c_int, [P]),
        ('rd_kafka_consumer_group_state_name', ctypes.c_char_p, [ctypes.c_int]),
        ('rd_kafka_error_string', ctypes.c_char_p, [P]),
    ]:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    LIST_CONSUMER_GROUPS = 12  # rd_kafka_admin_op_t RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS
    STATE_STABLE, STATE_EMPTY = 3, 5  # rd_kafka_consumer_group_state_t
    err = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    lib.rd_kafka_conf_set(conf, b'bootstrap.servers', bootstrap.encode(), err, 512)
    rk = lib.rd_kafka_new(0, conf, err, 512)
    queue = lib.rd_kafka_queue_new(rk)
    create('listed', {})
    consumer = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'listed-group'})
    consumer.subscribe(['listed'])
    for _ in range(60):
        consumer.poll(0.5)
        if consumer.assignment():
            break

    def listing(label, states):
        options = None
        if states:
            options = lib.rd_kafka_AdminOptions_new(rk, LIST_CONSUMER_GROUPS)
            arr = (ctypes.c_int * len(states))(*states)
            lib.rd_kafka_AdminOptions_set_match_consumer_group_states(options, arr, len(states))
        lib.rd_kafka_ListConsumerGroups(rk, options, queue)
        ev = lib.rd_kafka_queue_poll(queue, 15000)
        result = lib.rd_kafka_event_ListConsumerGroups_result(ev)
        n = ctypes.c_size_t()
        valid = lib.rd_kafka_ListConsumerGroups_result_valid(result, ctypes.byref(n))
        groups = {lib.rd_kafka_ConsumerGroupListing_group_id(valid[i]).decode():
                  lib.rd_kafka_consumer_group_state_name(
                      lib.rd_kafka_ConsumerGroupListing_state(valid[i])).decode()
                  for i in range(n.value)}
        m = ctypes.c_size_t()
        errors = lib.rd_kafka_ListConsumerGroups_result_errors(result, ctypes.byref(m))
        emit('listed', label=label, groups=groups,
             errors=[lib.rd_kafka_error_string(errors[i]).decode() for i in range(m.value)])

    listing('all', [])
    listing('stable', [STATE_STABLE])
    listing('empty', [STATE_EMPTY])
    consumer.close()
emit('done')
