"""Connection-manager benchmarks (stdlib only, asyncio with bare protocols so the client stays light).

  connections: hold N idle MQTT 5 connections (CONNECT + SUBSCRIBE) on one CM node, spread over
               source addresses 127.0.0.2.., and print the node's heap and RSS per connection.
  delivery:    connect D devices, send RATE messages/s for SECONDS through the Dispatcher API
               (to one device each), and print p50/p99 from API accept (acceptedAt in the payload)
               to the device's receipt (this client's clock: same machine).

The MQTT packets written here are the few fixed ones a bench client needs (CONNECT, SUBSCRIBE,
PUBACK) and a PUBLISH reader; the server under test uses Netty's codec.
"""
import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import socket
import subprocess
import sys
import time

from ..servers import http_json


def varint(n):
    out = bytearray()
    while True:
        digit = n % 128
        n //= 128
        out.append(digit | 0x80 if n else digit)
        if not n:
            return bytes(out)


def mqtt_string(s):
    b = s.encode()
    return len(b).to_bytes(2, "big") + b


def connect_packet(client_id, username, password, keepalive):
    body = mqtt_string("MQTT") + bytes([5, 0xC2]) + keepalive.to_bytes(2, "big") + b"\x00"
    body += mqtt_string(client_id) + mqtt_string(username) + mqtt_string(password)
    return b"\x10" + varint(len(body)) + body


def subscribe_packet(topic):
    body = (1).to_bytes(2, "big") + b"\x00" + mqtt_string(topic) + b"\x01"
    return b"\x82" + varint(len(body)) + body


def device_password(crypto_key_b64, app, device):
    """The dispatcher's MqttCredentials: HMAC-SHA256(app/device) under a key derived from the crypto key."""
    key = hmac.new(base64.b64decode(crypto_key_b64), b"herald-mqtt-device-password-v1", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(hmac.new(key, f"{app}/{device}".encode(), hashlib.sha256).digest()).rstrip(b"=").decode()


class Device(asyncio.Protocol):
    """One MQTT 5 device: connects, subscribes to its topic, acknowledges every QoS 1 PUBLISH."""

    def __init__(self, client_id, app, password, connected, on_message=None):
        self.client_id, self.app, self.password = client_id, app, password
        self.connected = connected
        self.on_message = on_message
        self.buffer = bytearray()
        self.transport = None
        self.subscribed = False

    def connection_made(self, transport):
        self.transport = transport
        transport.write(connect_packet(self.client_id, self.app, self.password, 900))

    def data_received(self, data):
        self.buffer += data
        while True:
            if len(self.buffer) < 2:
                return
            length, shift, i = 0, 0, 1
            while True:
                if i >= len(self.buffer):
                    return
                digit = self.buffer[i]
                length |= (digit & 0x7F) << shift
                shift += 7
                i += 1
                if not digit & 0x80:
                    break
            if len(self.buffer) < i + length:
                return
            kind, body = self.buffer[0], bytes(self.buffer[i:i + length])
            del self.buffer[:i + length]
            self.packet(kind, body)

    def packet(self, kind, body):
        if kind == 0x20:  # CONNACK
            if body[1] != 0:
                self.fail(f"CONNACK {body[1]:#x}")
                return
            self.transport.write(subscribe_packet(f"apps/{self.app}/devices/{self.client_id}"))
        elif kind == 0x90:  # SUBACK
            self.subscribed = True
            if not self.connected.done():
                self.connected.set_result(self)
        elif kind >> 4 == 3:  # PUBLISH
            topic_len = int.from_bytes(body[0:2], "big")
            pos = 2 + topic_len
            packet_id = int.from_bytes(body[pos:pos + 2], "big")
            pos += 2
            props, shift = 0, 0
            while True:  # properties length (varint)
                digit = body[pos]
                props |= (digit & 0x7F) << shift
                shift += 7
                pos += 1
                if not digit & 0x80:
                    break
            payload = body[pos + props:]
            received_ms = time.time() * 1000
            self.transport.write(b"\x40\x02" + packet_id.to_bytes(2, "big"))
            if self.on_message:
                self.on_message(payload, received_ms)
        elif kind == 0xE0:
            self.fail(f"DISCONNECT {body[0]:#x}" if body else "DISCONNECT")

    def fail(self, why):
        if not self.connected.done():
            self.connected.set_exception(RuntimeError(f"{self.client_id}: {why}"))

    def connection_lost(self, exc):
        self.fail(f"connection lost: {exc}")


async def open_devices(host, port, app, ids, passwords, sources, concurrency, on_message=None):
    loop = asyncio.get_running_loop()
    devices = []
    gate = asyncio.Semaphore(concurrency)

    async def one(n, device_id):
        async with gate:
            connected = loop.create_future()
            source = sources[n % len(sources)]
            await loop.create_connection(lambda: Device(device_id, app, passwords[n], connected, on_message),
                                         host, port, local_addr=(source, 0))
            devices.append(await asyncio.wait_for(connected, 60))

    await asyncio.gather(*(one(n, d) for n, d in enumerate(ids)))
    return devices


def jcmd(pid, *args):
    # The jcmd of the JDK running the process: another version's cannot attach.
    tool = os.path.join(os.path.dirname(os.readlink(f"/proc/{pid}/exe")), "jcmd")
    return subprocess.run([tool, str(pid), *args], capture_output=True, text=True, check=True).stdout


def heap_used_bytes(pid):
    """Heap in use right after a full GC (live data), from jcmd GC.heap_info."""
    jcmd(pid, "GC.run")
    time.sleep(1)
    info = jcmd(pid, "GC.heap_info")
    # One "total ..K, used ..K" line per generation (Serial, Parallel: young and old) or for the
    # whole heap (G1); Metaspace's lines have no "total". The first line alone is the young
    # generation under the local run's SerialGC, all but empty after a full GC.
    used = [int(k) for k in re.findall(r"total \d+K, used (\d+)K", info)]
    if not used:
        raise RuntimeError(f"no heap figures in jcmd GC.heap_info of {pid}: {info}")
    return sum(used) * 1024


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def connections(args):
    ids = [f"idle-{n}" for n in range(args.count)]
    passwords = [device_password(args.crypto_key, args.app, d) for d in ids]
    sources = [f"127.0.0.{k}" for k in range(2, 2 + max(1, (args.count + 19999) // 20000))]
    heap0, rss0 = heap_used_bytes(args.pid), rss_bytes(args.pid)
    print(f"CM pid {args.pid} before: heap after GC {heap0 / 2**20:.1f} MiB, RSS {rss0 / 2**20:.1f} MiB")
    start = time.time()
    devices = await open_devices(args.host, args.port, args.app, ids, passwords, sources, args.concurrency)
    took = time.time() - start
    print(f"{len(devices)} connections (CONNECT + SUBSCRIBE) from {len(sources)} source addresses in {took:.1f} s "
          f"({len(devices) / took:.0f}/s)")
    await asyncio.sleep(args.hold)
    alive = sum(1 for d in devices if not d.transport.is_closing())
    heap1, rss1 = heap_used_bytes(args.pid), rss_bytes(args.pid)
    print(f"CM after {args.hold} s idle, {alive} connections open: heap after GC {heap1 / 2**20:.1f} MiB, RSS {rss1 / 2**20:.1f} MiB")
    print(f"per connection: heap {(heap1 - heap0) / alive / 1024:.2f} kB, RSS {(rss1 - rss0) / alive / 1024:.2f} kB "
          f"(target <= 20 kB)")
    for d in devices:
        d.transport.close()


async def http_post(reader, writer, path, key, body):
    """One POST on a kept-alive connection; returns (status, server closes the connection)."""
    data = json.dumps(body).encode()
    writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
    status_line = await reader.readline()
    if not status_line:
        return None, True
    length, chunked, closing = 0, False, False
    while True:
        line = (await reader.readline()).lower()
        if line in (b"\r\n", b""):
            break
        if line.startswith(b"content-length:"):
            length = int(line.split(b":")[1])
        elif line.startswith(b"transfer-encoding:") and b"chunked" in line:
            chunked = True
        elif line.startswith(b"connection:") and b"close" in line:
            closing = True
    if chunked:
        while True:
            size = int((await reader.readline()).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    else:
        await reader.readexactly(length)
    return int(status_line.split()[1]), closing


async def delivery(args, window=None):
    ids = [f"bench-dev-{n}" for n in range(args.devices)]
    passwords = []
    for d in ids:
        status, answer = http_json("PUT", f"{args.api}/v1/apps/{args.app}/devices/{d}", {"channel": "mqtt"},
                                   {"Authorization": f"Bearer {args.key}"}, timeout=30)
        if status >= 300:
            raise SystemExit(f"device registration failed: {status} {answer}")
        passwords.append(answer["mqtt"]["password"])
    latencies, seen = [], set()

    def on_message(payload, received_ms):
        message = json.loads(payload)
        if message["id"] not in seen:
            seen.add(message["id"])
            latencies.append(received_ms - message["acceptedAt"])

    devices = await open_devices(args.host, args.port, args.app, ids, passwords, ["127.0.0.1"], 200, on_message)
    print(f"{len(devices)} devices connected and subscribed")
    total = args.rate * args.seconds
    queue = asyncio.Queue()
    accepted, errors = [0], [0]

    async def sender():
        reader, writer = await asyncio.open_connection("127.0.0.1", args.api_port)
        while True:
            n = await queue.get()
            if n is None:
                writer.close()
                return
            device = ids[n % len(ids)]
            # devices: the send names a registered device (an audience job the gateway expands);
            # tokens: it names the MQTT target directly (its token is the device id), one hop less.
            to = {"devices": [device]} if args.to == "devices" else {"tokens": [{"channel": "mqtt", "token": device}]}
            body = {"to": to, "title": f"bench {n}", "ttl": 600}
            status, closing = await http_post(reader, writer, f"/v1/apps/{args.app}/messages", args.key, body)
            if status is None:  # the server had closed this kept-alive connection: send again on a new one
                reader, writer = await asyncio.open_connection("127.0.0.1", args.api_port)
                status, closing = await http_post(reader, writer, f"/v1/apps/{args.app}/messages", args.key, body)
            if status == 202:
                accepted[0] += 1
            else:
                errors[0] += 1
            if closing:
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", args.api_port)

    tasks = [asyncio.create_task(sender()) for _ in range(args.connections)]
    if window:
        window.start()
    start = time.monotonic()
    for n in range(total):
        # Open loop: message n is due at start + n / rate, whether or not earlier ones are done.
        delay = start + n / args.rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        queue.put_nowait(n)
    for _ in tasks:
        queue.put_nowait(None)
    await asyncio.gather(*tasks)
    offered = time.monotonic() - start
    deadline = time.monotonic() + 60
    while len(latencies) < accepted[0] and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    if window:
        window.stop()
    latencies.sort()

    def pct(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else float("nan")

    print(f"sends to {args.to}: offered {total} messages in {offered:.1f} s ({total / offered:.0f}/s): {accepted[0]} accepted (202), "
          f"{errors[0]} errors, {len(latencies)} received by devices")
    print(f"API accept -> device receipt: p50 {pct(0.50):.1f} ms, p99 {pct(0.99):.1f} ms, max {latencies[-1] if latencies else 0:.1f} ms "
          f"(target p99 <= 50 ms)")
    for d in devices:
        d.transport.close()


def main(argv=None, window=None):
    """``window`` (delivery only): an object whose ``start()`` and ``stop()`` run around the sends and
    the wait for their receipts (a CPU reading or a profiler)."""
    parser = argparse.ArgumentParser(prog="python -m herald_load.bench.mqtt")
    parser.add_argument("mode", choices=["connections", "delivery"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=1883)
    parser.add_argument("--app", required=True)
    parser.add_argument("--pid", type=int, help="CM process (connections)")
    parser.add_argument("--crypto-key", help="base64 HERALD_CRYPTO_KEY (connections: passwords computed locally)")
    parser.add_argument("--count", type=int, default=50000)
    parser.add_argument("--hold", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=500)
    parser.add_argument("--api", default="http://127.0.0.1:8080")
    parser.add_argument("--api-port", type=int, default=8080)
    parser.add_argument("--key", help="the app's API key (delivery)")
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--to", choices=["devices", "tokens"], default="devices")
    args = parser.parse_args(argv)
    asyncio.run(connections(args) if args.mode == "connections" else delivery(args, window))


if __name__ == "__main__":
    main()
