"""LocalPlatform's command lines, checked without starting anything."""

from __future__ import annotations

from types import SimpleNamespace

from herald_load.local import LocalPlatform, ProviderSandbox


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
            "--herald.gateway.fcm.allowed-token-hosts=127.0.0.1,localhost",
            "--herald.gateway.max-in-flight=4"} <= set(args)
    # Secrets go by environment, never on the command line.
    assert not any(platform.crypto_key in a or platform.admin_token in a for a in command)
    assert platform.service_env()["HERALD_CRYPTO_KEY"] == platform.crypto_key
