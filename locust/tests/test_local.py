"""LocalPlatform's command lines and the local run's fixed-port mode, checked without starting
servers."""

from __future__ import annotations

import os
import socket
from types import SimpleNamespace

import pytest

from herald_load.local import LocalPlatform, ProviderSandbox
from herald_load.processes import FIXED_PORTS, ChildProcess, PlatformError, require_free
from herald_load.servers import RabbitMQ, Redis, pinned_settings


def test_a_gateway_command_points_at_this_platform_and_its_arguments_win(tmp_path):
    jar = tmp_path / "services" / "gateway" / "target" / "gateway-1.0-exec.jar"
    jar.parent.mkdir(parents=True)
    jar.touch()
    platform = LocalPlatform(tmp_path / "work", root=tmp_path, jvm_options=["-Xmx1m"], log=lambda _: None)
    platform._java = "/jdk/bin/java"
    platform.rabbit = SimpleNamespace(port=21001)
    platform.redis = SimpleNamespace(uri="redis://127.0.0.1:21002")
    platform.sandbox = ProviderSandbox(SimpleNamespace(port=21003), 21004, tmp_path / "apns.pem")

    command = platform.gateway_command(21005, {"herald.gateway.max-in-flight": 4},
                                       jvm_options=["-XX:TieredStopAtLevel=1"])

    assert command[:4] == ["/jdk/bin/java", "-XX:TieredStopAtLevel=1", "-jar", str(jar)]
    args = command[4:]
    assert args[0] == "--server.port=21005"
    assert {"--spring.rabbitmq.port=21001", "--herald.redis-uri=redis://127.0.0.1:21002",
            "--herald.gateway.fcm.endpoint=http://127.0.0.1:21003",
            "--herald.gateway.apns.sandbox-endpoint=https://127.0.0.1:21004",
            "--spring.profiles.active=sandbox",
            "--herald.fcm-token-hosts=127.0.0.1,localhost",
            "--herald.gateway.max-in-flight=4"} <= set(args)
    # Secrets go by environment, never on the command line.
    assert not any(platform.crypto_key in a or platform.admin_token in a for a in command)
    assert platform.service_env()["HERALD_CRYPTO_KEY"] == platform.crypto_key


# ------------------------------------------------------------------ the local run's fixed-port mode

def test_the_local_run_uses_the_well_known_ports_one_of_each_with_pid_files(tmp_path):
    platform = LocalPlatform(tmp_path, fixed_ports=True, root=tmp_path, log=lambda _: None,
                             admin_token="admin", crypto_key="key")

    assert (platform._port("dispatcher"), platform._port("gateway"),
            platform._port("connection-manager"), platform._port("mqtt"),
            platform._port("provider-sandbox"), platform._port("apns")) == (8080, 8081, 8082, 1883, 9090, 9443)
    assert platform._name("gateway", 1) == "gateway"
    assert platform._pid_file("gateway") == tmp_path.resolve() / "gateway.pid"
    assert platform._log("gateway") == tmp_path.resolve() / "gateway.log"   # .run/<service>.log
    assert (platform.admin_token, platform.crypto_key) == ("admin", "key")


def test_a_load_run_uses_free_ports_and_numbered_replicas_without_pid_files(tmp_path):
    platform = LocalPlatform(tmp_path, log=lambda _: None)

    assert platform._port("gateway") not in FIXED_PORTS.values()
    assert platform._name("gateway", 2) == "gateway-2"
    assert platform._pid_file("gateway") is None
    assert platform.logs == tmp_path.resolve() / "logs"


def test_redis_and_rabbitmq_start_with_the_pinned_settings_the_java_tests_read(tmp_path):
    settings = pinned_settings()
    assert settings["redis.save"] == "" and settings["redis.appendonly"] == "yes"

    redis = Redis(tmp_path / "redis", tmp_path / "redis.log", fixed_ports=True)
    command = redis.command()
    assert command[1:3] == ["--port", "6379"]
    assert " ".join(command).count("--save") == 1
    assert command[command.index("--save") + 1] == "" and "--appendonly" in command
    assert command[command.index("--bind") + 1] == "127.0.0.1"

    rabbit = RabbitMQ(tmp_path / "rabbitmq", tmp_path / "rabbitmq.log", fixed_ports=True)
    assert rabbit.ports == (5672, 15672, 25672, 15692) and rabbit.node == "herald@localhost"
    config = rabbit.config().splitlines()
    assert {"loopback_users = none", "listeners.tcp.default = 127.0.0.1:5672",
            "management.tcp.port = 15672", "prometheus.tcp.port = 15692"} <= set(config)
    assert rabbit.environment()["RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS"].startswith("-kernel")

    on_free_ports = RabbitMQ(tmp_path / "other", tmp_path / "other.log")
    assert not set(on_free_ports.ports) & set(FIXED_PORTS.values())
    assert on_free_ports.node != rabbit.node


def test_a_fixed_port_taken_by_someone_else_is_named_not_taken_over(tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(PlatformError, match=f"{port}"):
            require_free("Redis", [port])
    require_free("Redis", [port])   # free again: no error


def test_a_process_left_running_is_found_again_by_its_pid_file_and_stopped(tmp_path):
    pid_file = tmp_path / "sleeper.pid"
    started = ChildProcess("sleeper", ["sleep", "300"], tmp_path / "sleeper.log", pid_file=pid_file)

    adopted = ChildProcess.adopt("sleeper", pid_file, tmp_path / "sleeper.log")
    assert adopted is not None and adopted.pid == started.pid and adopted.alive()

    adopted.stop(5)
    started.popen.wait(5)   # reap it (in a real stop the starting process is long gone)
    assert not pid_file.exists()
    assert ChildProcess.adopt("sleeper", pid_file, tmp_path / "sleeper.log") is None


def test_a_pid_file_whose_pid_now_names_another_process_is_not_adopted(tmp_path):
    pid_file = tmp_path / "stale.pid"
    pid_file.write_text(f"{os.getpid()} 1\n")   # our pid, but not the start time written

    assert ChildProcess.adopt("stale", pid_file, tmp_path / "stale.log") is None


def test_stop_of_a_local_run_that_is_not_running_finds_nothing_to_stop(tmp_path):
    platform = LocalPlatform(tmp_path, fixed_ports=True, root=tmp_path, log=lambda _: None)
    platform.attach()

    assert all(line.endswith("stopped") for line in platform.status())
    platform.close()


def test_the_local_runs_jvm_options_add_herald_java_opts_to_the_defaults(tmp_path, monkeypatch):
    from herald_load.local import DEFAULT_JVM_OPTIONS
    from herald_load.localrun import local_platform

    monkeypatch.setenv("HERALD_JAVA_OPTS", "-Xmx512m -Dx=1")
    platform = local_platform(tmp_path, say=lambda _: None)

    # The serial collector and small heaps stay (2 cores, seven JVMs); the later -Xmx wins in the JVM.
    assert platform.jvm_options == [*DEFAULT_JVM_OPTIONS, "-Xmx512m", "-Dx=1"]
    monkeypatch.delenv("HERALD_JAVA_OPTS")
    assert local_platform(tmp_path, say=lambda _: None).jvm_options == list(DEFAULT_JVM_OPTIONS)


def test_the_benchmarks_own_jvm_options_come_after_the_defaults(tmp_path, monkeypatch):
    from herald_load.bench import profile
    from herald_load.local import DEFAULT_JVM_OPTIONS
    from herald_load.localrun import local_platform

    monkeypatch.delenv("HERALD_JAVA_OPTS", raising=False)
    platform = local_platform(tmp_path, say=lambda _: None, extra_jvm_options=profile.JVM_OPTIONS)

    assert platform.jvm_options == [*DEFAULT_JVM_OPTIONS, "-XX:FlightRecorderOptions:stackdepth=128"]


def test_a_service_with_a_heap_of_its_own_gets_it_after_the_defaults_and_before_herald_java_opts(tmp_path, monkeypatch):
    from herald_load.local import DEFAULT_JVM_OPTIONS, SERVICE_HEAPS
    from herald_load.localrun import local_platform

    monkeypatch.setenv("HERALD_JAVA_OPTS", "-Xmx512m")
    platform = local_platform(tmp_path, say=lambda _: None)

    assert platform._service_jvm_options("gateway") == [*DEFAULT_JVM_OPTIONS, *SERVICE_HEAPS["gateway"], "-Xmx512m"]
    assert platform._service_jvm_options("connection-manager") == [*DEFAULT_JVM_OPTIONS, "-Xmx512m"]
    # Options that are not the platform's defaults (the scale-out runner's own) are taken as given.
    assert LocalPlatform(tmp_path, jvm_options=["-Xmx1g"])._service_jvm_options("gateway") == ["-Xmx1g"]


def test_stopping_heralds_services_leaves_the_sandbox_running(tmp_path):
    """The fan-out benchmark restarts Herald against a sandbox kept warm (bench.run._warm_provider)."""
    platform = LocalPlatform(tmp_path, root=tmp_path, log=lambda _: None)

    def sleeper(name):
        return ChildProcess(name, ["sleep", "300"], tmp_path / f"{name}.log")

    platform.dispatchers.append(sleeper("dispatcher-1"))
    platform.gateways.append(sleeper("gateway-1"))
    platform.connection_managers.append(sleeper("connection-manager-1"))
    sandbox = sleeper("provider-sandbox")
    platform.sandbox = ProviderSandbox(sandbox, 0, tmp_path / "apns.pem")
    try:
        platform.stop_herald_services()

        assert platform.pids() == {"provider-sandbox": sandbox.pid}
        platform.stop_services()
        assert platform.pids() == {} and not sandbox.alive()
    finally:
        platform.close()


def test_a_service_starts_from_its_workload_aot_cache_once_one_is_recorded(tmp_path):
    jar = tmp_path / "services" / "gateway" / "target" / "gateway-1.0-exec.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"a build")
    platform = LocalPlatform(tmp_path / "work", root=tmp_path, log=lambda _: None, aot_cache=True)
    folder = platform._aot_folder("gateway")
    folder.mkdir(parents=True)
    (folder / jar.name).touch()   # the jar's extracted layout, as `-Djarmode=tools extract` leaves it
    (folder / "app.aot").touch()   # a training start's cache
    command = ["/jdk/bin/java", "-Xmx1m", "-jar", str(jar), "--server.port=1"]

    assert platform._with_aot_cache("gateway", command, None) == [
        "/jdk/bin/java", "-Xmx1m", f"-XX:AOTCache={folder / 'app.aot'}", "-jar", str(folder / jar.name),
        "--server.port=1"]
    assert not platform.has_workload_aot_caches(["gateway"])

    platform.aot_training = True
    assert f"-XX:AOTCacheOutput={folder / 'workload.aot'}" in platform._with_aot_cache("gateway", command, None)

    platform.aot_training = False
    (folder / "workload.aot").touch()   # written by the training JVM as it stopped
    assert f"-XX:AOTCache={folder / 'workload.aot'}" in platform._with_aot_cache("gateway", command, None)
    assert platform.has_workload_aot_caches(["gateway"])

    jar.write_bytes(b"another build")   # a new build has no cache yet, and the old build's go
    assert not platform.has_workload_aot_caches(["gateway"])
    platform._java, platform.aot_training = "true", True   # `true` stands in for the jar's extraction
    platform._with_aot_cache("gateway", command, None)
    assert not folder.exists() and platform._aot_folder("gateway").exists()

