"""Jib assembles each service's image without Docker (`mvn ... jib:buildTar`, run by
scripts/k8s/images.sh services). No registry is reachable here, so the base is the Java 25 runtime
image built here by scripts/k8s/images.sh (the production base, eclipse-temurin:25-jre, comes from
the root pom.xml); that takes root (debootstrap), so without root the base is `scratch` and the
tests that run images are skipped. Checked: each image's name, the non-root user and the entrypoint;
the base's java on PATH and its user 65532; and that the images run under Debian's runc with the
charts' security context (runc_container.py): java -version prints 25, the pause image ends on
SIGTERM, and the provider sandbox starts, answers its health endpoint on loopback in a network
namespace of its own and stops on SIGTERM, and each service starts beside a Redis in its namespace
and answers its liveness probe. The RabbitMQ image (Debian's packages, user 999) answers AMQP and
rabbitmq-diagnostics ping; the Redis image (Debian's redis-server) answers PING and stops on
SIGTERM."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from releases import ROOT
from runc_container import image_config, layer_names, network_namespace, read_file, running
from testbed import run

MODULES = ["dispatcher", "gateway", "provider-sandbox", "connection-manager"]
IMAGES_SH = ROOT / "scripts/k8s/images.sh"
AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="the base image (debootstrap) and runc need root")


def built_image(which: str) -> Path:
    """scripts/k8s/images.sh's tarball of `base`, `pause` or `redis` (cached; built on first use)."""
    return Path(run(["bash", str(IMAGES_SH), which]).split()[1])


@pytest.fixture(scope="module")
def base_image() -> Path | None:
    return built_image("base") if AS_ROOT else None


@pytest.fixture(scope="module")
def images(base_image) -> dict[str, Path]:
    """Module -> its image tarball, built by Jib on the base (images.sh services, one reactor run)."""
    env = os.environ | ({} if base_image else {"HERALD_IMAGE_BASE": "scratch"})
    printed = run(["bash", str(IMAGES_SH), "services"], env=env)
    tarballs = {name.split("/")[-1].split(":")[0].removeprefix("herald-"): Path(tarball)
                for name, tarball in (line.split() for line in printed.splitlines())}
    assert sorted(tarballs) == sorted(MODULES), printed
    return tarballs


@pytest.mark.parametrize("module", MODULES)
def test_image_runs_java_as_user_65532(images, module):
    manifest, image = image_config(images[module])
    config = image["config"]
    assert manifest["RepoTags"] == [f"herald-{module}:latest"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"][0] == "java"


@needs_root
def test_base_has_java_on_path_and_user_65532(base_image):
    _, image = image_config(base_image)
    config = image["config"]
    path = next(entry.removeprefix("PATH=") for entry in config["Env"] if entry.startswith("PATH="))
    files = {name for layer in layer_names(base_image) for name in layer}
    assert any(f"{folder.strip('/')}/java" in files for folder in path.split(":")), path
    assert config["User"] == "65532:65532"
    passwd = read_file(base_image, "etc/passwd").decode()
    assert "nonroot:x:65532:65532:" in passwd
    assert "etc/ssl/certs/ca-certificates.crt" in files
    assert not {"bin/sh", "usr/bin/sh", "usr/bin/bash"} & files, "the base has a shell"


@needs_root
@pytest.mark.parametrize("module", MODULES)
def test_service_image_is_the_base_plus_the_service(images, base_image, module):
    base_layers = image_config(base_image)[1]["rootfs"]["diff_ids"]
    assert image_config(images[module])[1]["rootfs"]["diff_ids"][:len(base_layers)] == base_layers


@needs_root
def test_java_runs_in_the_base_image(base_image, tmp_path):
    with running(base_image, tmp_path / "java", args=["java", "-version"]) as container:
        rc = container.wait(timeout=60)
        output = container.logs()
    print(f"runc, java -version in the base image (exit {rc}):\n{output}")
    assert rc == 0, output
    assert 'version "25' in output, output


@needs_root
def test_pause_image_sleeps_until_sigterm(tmp_path):
    with running(built_image("pause"), tmp_path / "pause") as container:
        with pytest.raises(subprocess.TimeoutExpired):
            container.wait(timeout=1)  # still asleep
        container.signal("TERM")
        assert container.wait(timeout=10) == 0, container.logs()


def health(netns: str, container, url: str) -> dict:
    """`url`'s JSON answer, asked in the namespace until it answers (at most 120 s) or the container ends."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and container.process.poll() is None:
        probe = subprocess.run(["ip", "netns", "exec", netns, "curl", "-sf", "--max-time", "2", url],
                               capture_output=True, text=True)
        if probe.returncode == 0:
            return json.loads(probe.stdout)
        time.sleep(0.5)  # polling interval of the check, like a kubelet's probe period
    raise AssertionError(f"no answer from {url} (container exit code {container.process.poll()}):\n{container.logs()}")


def stop_gracefully(container) -> None:
    """SIGTERM; the JVM runs its shutdown hooks and exits 128 + SIGTERM, it is not killed."""
    container.signal("TERM")
    rc = container.wait(timeout=30)
    output = container.logs()
    print(f"after SIGTERM it exited with {rc}; its last lines:\n" + "\n".join(output.splitlines()[-3:]))
    assert rc == 143, output


@needs_root
def test_provider_sandbox_image_starts_answers_health_and_stops_on_sigterm(images, tmp_path):
    url = "http://127.0.0.1:9090/actuator/health"
    with network_namespace() as netns, \
            running(images["provider-sandbox"], tmp_path / "sandbox", netns=netns) as container:
        answer = health(netns, container, url)
        print(f"runc, provider sandbox in network namespace {netns}: {url} answered {answer}")
        assert answer["status"] == "UP"
        stop_gracefully(container)


def ping(netns: str, server, timeout: float = 30) -> str:
    """PING to port 6379 in the namespace until PONG, the server process ends or `timeout` passes;
    the last answer."""
    command = ["ip", "netns", "exec", netns, "redis-cli", "-p", "6379", "ping"]
    deadline = time.monotonic() + timeout
    answer = ""
    while answer != "PONG" and time.monotonic() < deadline and server.poll() is None:
        answer = subprocess.run(command, capture_output=True, text=True).stdout.strip()
        if answer != "PONG":
            time.sleep(0.1)  # polling interval of the check
    return answer


@contextmanager
def redis_in(netns: str):
    """Debian's redis-server on the namespace's loopback (the services connect to Redis as they start)."""
    server = subprocess.Popen(["ip", "netns", "exec", netns, "redis-server", "--port", "6379", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        assert ping(netns, server) == "PONG", f"redis-server exited with {server.returncode}"
        yield
    finally:
        server.terminate()
        server.wait(timeout=30)


@needs_root
@pytest.mark.parametrize("module", ["dispatcher", "gateway", "connection-manager"])
def test_service_image_starts_with_redis_and_is_live(images, module, tmp_path):
    """RabbitMQ is not there, so the pod would not be Ready; alive is what the image alone can show."""
    port = {"dispatcher": 8080, "gateway": 8081, "connection-manager": 8082}[module]
    url = f"http://127.0.0.1:{port}/actuator/health/liveness"
    secrets = {"HERALD_CRYPTO_KEY": base64.b64encode(os.urandom(32)).decode(),
               "HERALD_DISPATCHER_ADMIN_TOKEN": base64.b64encode(os.urandom(32)).decode()}
    with network_namespace() as netns, redis_in(netns), \
            running(images[module], tmp_path / module, netns=netns, env=secrets) as container:
        answer = health(netns, container, url)
        print(f"runc, {module} in network namespace {netns} with Redis: {url} answered {answer}")
        assert answer["status"] == "UP"
        stop_gracefully(container)


AMQP_GREETING = """
import socket, struct, sys
with socket.create_connection(("127.0.0.1", 5672), timeout=5) as amqp:
    amqp.sendall(b"AMQP\\x00\\x00\\x09\\x01")
    frame = amqp.recv(11)
kind, channel, size, method = struct.unpack(">BHIL", frame[:11])
sys.exit(0 if (kind, channel, method) == (1, 0, 0x000A000A) else 1)  # connection.start on channel 0
"""


@needs_root
def test_rabbitmq_image_starts_answers_amqp_and_its_cli_as_user_999(tmp_path):
    """The image the RabbitMQ Cluster Operator runs on the real node (tests/node/test_rabbitmq_operators.py):
    Debian's RabbitMQ as user 999 on a read-only root, /var/lib/rabbitmq empty as the operator's emptyDir
    gives it; AMQP on 5672 answers with connection.start, and the CLI the operator execs answers too."""
    _, tarball = run(["bash", str(IMAGES_SH), "rabbitmq"]).split()
    assert image_config(Path(tarball))[1]["config"]["User"] == "999:999"
    with network_namespace() as netns, \
            running(Path(tarball), tmp_path / "rabbitmq", netns=netns, writable=("/var/lib/rabbitmq",),
                    env={"RABBITMQ_NODENAME": "rabbit@localhost"}) as container:
        deadline = time.monotonic() + 120
        while subprocess.run(["ip", "netns", "exec", netns, "python3", "-c", AMQP_GREETING],
                             capture_output=True).returncode != 0:
            assert container.process.poll() is None, container.logs()
            assert time.monotonic() < deadline, f"no AMQP greeting within 120 s:\n{container.logs()}"
            time.sleep(1)  # polling interval of the check, like a kubelet's probe period
        ping = container.exec("rabbitmq-diagnostics", "-q", "ping")
        print(f"runc, RabbitMQ in network namespace {netns}: AMQP answered; rabbitmq-diagnostics ping: {ping.stdout}")
        assert ping.returncode == 0 and "Ping succeeded" in ping.stdout, ping
        assert container.exec("id", "-u").stdout.strip() == "999"
        container.signal("TERM")
        assert container.wait(timeout=60) == 0, container.logs()
@needs_root
def test_redis_image_answers_ping_and_stops_on_sigterm(tmp_path):
    """Debian's redis-server (scripts/k8s/images.sh redis) as user 65532 on a read-only root: no
    snapshots (the chart gives /data a volume; here there is none), PING from the namespace's loopback."""
    tarball = built_image("redis")
    config = image_config(tarball)[1]["config"]
    assert config["User"] == "65532:65532"
    args = config["Entrypoint"] + ["--port", "6379", "--save", "", "--appendonly", "no"]
    with network_namespace() as netns, running(tarball, tmp_path / "redis", args=args, netns=netns) as container:
        answer = ping(netns, container.process)
        print(f"runc, {tarball.name} in network namespace {netns}: PING answered {answer!r}")
        assert answer == "PONG", container.logs()
        container.signal("TERM")
        assert container.wait(timeout=30) == 0, container.logs()
