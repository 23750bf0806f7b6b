"""The API server's aggregation layer for a test control plane (tests/testbed.py): the front proxy's
certificates and the kube-apiserver flags that let it forward to an extension API server such as
KEDA's metrics adapter (the external metrics API the HPA reads), plus the test certificates those
servers use (openssl).

Standard library only, like tests/testbed.py.
"""

from __future__ import annotations

from pathlib import Path

from testbed import run


def _openssl(*args: str, cwd: Path) -> None:
    run(["openssl", *args], cwd=cwd)


def make_ca(directory: Path, name: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN=herald-test-{name}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             cwd=directory)


def make_cert(directory: Path, ca: str, name: str, common_name: str, usages: str, sans: list[str] | None = None) -> None:
    """A leaf certificate `name`.crt/.key signed by `ca` (both in `directory`)."""
    extensions = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
                  f"extendedKeyUsage={usages}"]
    if sans:
        extensions.append("subjectAltName=" + ",".join(sans))
    (directory / f"{name}.ext").write_text("\n".join(extensions) + "\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
             "-out", f"{name}.csr", "-subj", f"/CN={common_name}", cwd=directory)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
             "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=directory)


def front_proxy_flags(directory: Path) -> list[str]:
    """Makes the front proxy's CA and client certificate in `directory`; returns the kube-apiserver
    flags of an aggregation layer that presents that client certificate to extension API servers and
    routes to their Endpoints' addresses (no kube-proxy on the API server's way)."""
    make_ca(directory, "front-proxy-ca")
    make_cert(directory, "front-proxy-ca", "front-proxy-client", "front-proxy-client", "clientAuth")
    return [
        "--enable-aggregator-routing=true",
        f"--requestheader-client-ca-file={directory / 'front-proxy-ca.crt'}",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={directory / 'front-proxy-client.crt'}",
        f"--proxy-client-key-file={directory / 'front-proxy-client.key'}",
    ]
