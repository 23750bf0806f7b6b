"""A real node for the test control plane (tests/testbed.py): containerd and runc from Debian, CNI from
Debian's containernetworking-plugins on a bridge the node makes itself, a kubelet and kube-proxy built
from k8s.io/kubernetes (scripts/k8s/testbed.sh build) and CoreDNS (built by scripts/k8s/test-node.sh)
serving cluster.local from the host. Pods really run; their addresses live in the network namespaces
CNI makes, on a bridge whose gateway address is the node's address (the kubelet refuses loopback).

`Node.down` removes everything the node made and `leftovers()` lists what is still there, so a test
run fails if anything survives and the next bring-up on this machine starts clean. Needs root.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from testbed import Kube, run

# What the node makes, and what leftovers() looks for: its bridge, the pod range behind it, the
# prefixes of the iptables chains of kube-proxy, the kubelet and CNI, and the cgroups of pods.
BRIDGE = "herald0"
POD_CIDR = "10.244.0.0/24"
NODE_IP = "10.244.0.1"  # the bridge's address: the pods' gateway, the node's InternalIP, CoreDNS
SERVICE_CIDR = "10.96.0.0/16"  # scripts/k8s/testbed.sh's --service-cluster-ip-range
REAL_NODE_LABEL = "herald.dev/real-node"  # on the real node: what pods select it by (kwok nodes lack it)
# Held from network_up() to down(): a second real node on this machine would share the bridge and
# kube-proxy's chains, so whoever brings one up waits for the one before to be gone.
LOCK = Path("/tmp/herald-real-node.lock")
CHAIN_PREFIXES = ("KUBE-", "CNI-")
TABLES = ("filter", "nat", "mangle", "raw")
NETNS_DIR = Path("/var/run/netns")
CGROUP_ROOT = Path("/sys/fs/cgroup")
# kube-proxy and the kubelet change these; down() puts the values found at up() back.
SYSCTLS = ("net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet", "net/bridge/bridge-nf-call-iptables")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float = 120, alive=lambda: None):
    """Polls check() until it returns something truthy; alive() raises if a server died meanwhile."""
    deadline = time.monotonic() + timeout
    while True:
        alive()
        try:
            result = check()
            if result:
                return result
        except (OSError, RuntimeError, subprocess.SubprocessError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.5)


def chains_and_jumps(command: str, table: str) -> tuple[list[str], list[list[str]]]:
    """The node's chains in one table, and the rules of other chains that jump to them."""
    printed = subprocess.run([command, "-t", table, "-S"], capture_output=True, text=True).stdout
    chains, jumps = [], []
    for line in printed.splitlines():
        words = shlex.split(line)
        if words[:1] == ["-N"] and words[1].startswith(CHAIN_PREFIXES):
            chains.append(words[1])
        elif words[:1] == ["-A"] and not words[1].startswith(CHAIN_PREFIXES) and \
                any(w.startswith(CHAIN_PREFIXES) for w in words[2:]):
            jumps.append(words[1:])
    return chains, jumps


def our_cgroups() -> list[Path]:
    """The kubelet's pod cgroups (kubepods) in every cgroup v1 hierarchy, deepest first."""
    found = []
    for hierarchy in CGROUP_ROOT.iterdir():
        top = hierarchy / "kubepods"
        if top.is_dir():
            found.extend(sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)))
            found.append(top)
    return found


@dataclass
class Node:
    """One real node named `name` registered with the control plane behind `kube`; its processes,
    state, logs and sockets in `directory`. `images` maps the names to import under (docker.io/local/...)
    to docker-save tarballs; `pause` is the one of them containerd uses as its sandbox image; `binaries`
    holds kubelet, kube-proxy and coredns (the testbed's cache, HERALD_K8S_BIN)."""

    directory: Path
    kube: Kube | None
    images: dict[str, Path]
    pause: str
    binaries: Path
    name: str = "herald-node"
    # Taints the kubelet registers the node with, e.g. ["herald.dev/real-node=true:NoSchedule"] in a
    # cluster whose kwok nodes take every pod that does not ask for the real node.
    taints: list[str] = field(default_factory=list)
    # The kubelet's featureGates (the control plane's --feature-gates must agree, testbed.sh).
    feature_gates: dict[str, bool] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    sysctls: dict[str, str] = field(default_factory=dict)
    netns_before: set[str] = field(default_factory=set)
    nft_tables_before: set[str] = field(default_factory=set)
    lock: IO | None = None

    @property
    def socket(self) -> Path:
        return self.directory / "containerd.sock"

    # ---------------------------------------------------------------- up

    def network_up(self) -> None:
        """Takes the machine's node lock and makes the bridge: what a control plane that pods reach
        binds to (NODE_IP), so it comes before the control plane; up() does it if nobody did."""
        if self.lock is not None:
            return
        self.lock = open(LOCK, "w")
        fcntl.flock(self.lock, fcntl.LOCK_EX)  # one real node per machine: the next one waits here
        left = leftovers(self.directory)
        if left and stale_node(left):
            print("a Herald node that was killed before its teardown left these; removing them:\n  "
                  + "\n  ".join(left), flush=True)
            remove_stale_node()
            left = leftovers(self.directory)
        if left:
            self.release()
            raise RuntimeError("the machine is not clean before the node starts:\n" + "\n".join(left))
        self.directory.mkdir(parents=True, exist_ok=True)
        self.sysctls = {key: (Path("/proc/sys") / key).read_text().strip() for key in SYSCTLS
                        if (Path("/proc/sys") / key).exists()}
        self.netns_before = set(os.listdir(NETNS_DIR)) if NETNS_DIR.is_dir() else set()
        self.nft_tables_before = nft_tables()
        run(["ip", "link", "add", BRIDGE, "type", "bridge"])
        run(["ip", "addr", "add", f"{NODE_IP}/{POD_CIDR.split('/')[1]}", "dev", BRIDGE])
        run(["ip", "link", "set", BRIDGE, "up"])
        # Pods reach ClusterIPs through the node: kube-proxy rewrites the address to a pod's, and the
        # node forwards the packet back onto the bridge. Only what arrives on the bridge is forwarded
        # (not the machine's ip_forward), and the pods' only route beyond the bridge is the Service range.
        (Path("/proc/sys/net/ipv4/conf") / BRIDGE / "forwarding").write_text("1")

    def up(self) -> None:
        """The node's servers on the bridge of network_up(); needs `kube` set."""
        self.network_up()
        self.start_containerd()
        self.start_kubelet()
        self.start_kube_proxy()
        self.start_coredns()

    def start(self, name: str, command: list[str]) -> None:
        log = open(self.directory / f"{name}.log", "w")
        self.processes[name] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, start_new_session=True)

    @property
    def running(self) -> bool:
        """Whether the kubelet runs: false once down() ran (the teardown test takes the node down
        while session fixtures still hold releases on it)."""
        kubelet = self.processes.get("kubelet")
        return kubelet is not None and kubelet.poll() is None

    def alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                tail = (self.directory / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited ({process.returncode}):\n{tail}")

    def ctr(self, *args: str) -> str:
        return run(["ctr", "--address", str(self.socket), "-n", "k8s.io", *args])

    def start_containerd(self) -> None:
        cni = self.directory / "cni"
        (cni / "net.d").mkdir(parents=True, exist_ok=True)
        (cni / "net.d" / "10-herald.conflist").write_text(json.dumps({
            "cniVersion": "0.4.0", "name": "herald",
            "plugins": [
                {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": False, "hairpinMode": True,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_CIDR, "gateway": NODE_IP}]],
                          "routes": [{"dst": SERVICE_CIDR, "gw": NODE_IP}], "dataDir": str(cni / "ipam")}},
                {"type": "portmap", "capabilities": {"portMappings": True}},
            ]}, indent=1))
        config = self.directory / "containerd.toml"
        # restrict_oom_score_adj: this VM refuses a negative oom_score_adj, which runc otherwise sets
        # (it fails with "can't get final child's PID from pipe"). containerd's CRI brings up each
        # pod's loopback itself with the loopback plugin from bin_dir.
        config.write_text(f"""version = 2
root = "{self.directory / 'containerd-root'}"
state = "{self.directory / 'containerd-state'}"
[grpc]
  address = "{self.socket}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{self.pause}"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{cni / 'net.d'}"
""")
        self.start("containerd", ["containerd", "--config", str(config)])
        wait_for("containerd's CRI plugin", lambda: any(
            line.split()[:2] == ["io.containerd.grpc.v1", "cri"] and line.split()[-1] == "ok"
            for line in self.ctr("plugins", "ls").splitlines()), alive=self.alive)
        import_images(self.socket, self.images)

    def start_kubelet(self) -> None:
        config = self.directory / "kubelet.yaml"
        config.write_text(json.dumps({
            "apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
            "cgroupDriver": "cgroupfs", "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{self.socket}",
            "enforceNodeAllocatable": [],
            "evictionHard": {"memory.available": "1Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%",
                             "imagefs.available": "1%"},
            "imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
            "address": NODE_IP, "port": free_port(), "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1", "healthzPort": free_port(),
            # The API server is the only client (logs, exec): no client certificates in this cluster.
            "authentication": {"anonymous": {"enabled": True}, "webhook": {"enabled": False}},
            "authorization": {"mode": "AlwaysAllow"},
            "clusterDNS": [NODE_IP], "clusterDomain": "cluster.local", "resolvConf": "",
            "serializeImagePulls": False,
            **({"featureGates": self.feature_gates} if self.feature_gates else {}),
        }, indent=1))
        self.start("kubelet", [str(self.binaries / "kubelet"), "--config", str(config),
                               "--kubeconfig", str(self.kube.kubeconfig),
                               "--root-dir", str(self.directory / "kubelet"),
                               "--cert-dir", str(self.directory / "kubelet-pki"),
                               "--hostname-override", self.name, "--node-ip", NODE_IP,
                               "--node-labels", f"{REAL_NODE_LABEL}=true",
                               *(["--register-with-taints", ",".join(self.taints)] if self.taints else [])])
        wait_for(f"node {self.name} Ready", lambda: self.ready(), alive=self.alive)

    def ready(self) -> bool:
        node = self.kube.get(f"/api/v1/nodes/{self.name}")
        conditions = (node or {}).get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    def start_kube_proxy(self) -> None:
        healthz = free_port()
        self.start("kube-proxy", [str(self.binaries / "kube-proxy"), "--kubeconfig", str(self.kube.kubeconfig),
                                  "--proxy-mode", "iptables", "--cluster-cidr", POD_CIDR,
                                  "--hostname-override", self.name,
                                  "--metrics-bind-address", f"127.0.0.1:{free_port()}",
                                  "--healthz-bind-address", f"127.0.0.1:{healthz}",
                                  # NodePorts only on the node's address, not on every address of the machine
                                  "--nodeport-addresses", f"{NODE_IP}/32",
                                  "--conntrack-max-per-core", "0",
                                  "--conntrack-tcp-timeout-established", "0",
                                  "--conntrack-tcp-timeout-close-wait", "0"])
        wait_for("kube-proxy's healthz", lambda: run(["curl", "-sf", f"http://127.0.0.1:{healthz}/healthz"]),
                 alive=self.alive)

    def start_coredns(self) -> None:
        ready = free_port()
        corefile = self.directory / "Corefile"
        corefile.write_text(f""".:53 {{
    bind {NODE_IP}
    errors
    ready 127.0.0.1:{ready}
    kubernetes cluster.local in-addr.arpa ip6.arpa {{
        kubeconfig {self.kube.kubeconfig}
    }}
}}
""")
        self.start("coredns", [str(self.binaries / "coredns"), "-conf", str(corefile)])
        wait_for("CoreDNS ready", lambda: run(["curl", "-sf", f"http://127.0.0.1:{ready}/ready"]), alive=self.alive)

    # ---------------------------------------------------------------- down

    def down(self) -> list[str]:
        """Stops and removes everything up() made; returns leftovers() afterwards (empty when clean)."""
        if "kubelet" in self.processes and self.processes["kubelet"].poll() is None:
            # The kubelet stops the pods itself: CNI DEL, sandbox network namespaces, mounts.
            subprocess.run(["kubectl", "--kubeconfig", str(self.kube.kubeconfig), "delete", "pods", "-A",
                            "--all", f"--field-selector=spec.nodeName={self.name}", "--timeout=60s",
                            "--grace-period=1"], capture_output=True)
        for name in ("coredns", "kube-proxy", "kubelet"):
            self.stop(name)
        self.remove_containers()
        self.stop("containerd")
        # The shims exit by themselves once their containers are deleted, a moment later; what is
        # still running after that is killed.
        try:
            wait_for("the containerd shims to exit", lambda: not node_processes(self.directory), timeout=10)
        except TimeoutError:
            for pid in node_processes(self.directory):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            wait_for("the killed containerd shims to exit", lambda: not node_processes(self.directory), timeout=10)
        kube_proxy = self.binaries / "kube-proxy"
        if kube_proxy.exists():
            subprocess.run([str(kube_proxy), "--cleanup"], capture_output=True)
        remove_chains()
        # The iptables (nf_tables) tables that the node's rules brought into being, now empty.
        for table in nft_tables() - self.nft_tables_before:
            subprocess.run(["nft", "delete", "table", *table.split()], capture_output=True)
        unmount_under(self.directory)
        remove_pod_network((set(os.listdir(NETNS_DIR)) if NETNS_DIR.is_dir() else set()) - self.netns_before)
        for key, value in self.sysctls.items():
            (Path("/proc/sys") / key).write_text(value)
        left = leftovers(self.directory) + [f"nft table {t}" for t in sorted(nft_tables() - self.nft_tables_before)]
        self.release()
        return left

    def release(self) -> None:
        if self.lock is not None:
            self.lock.close()  # closing the file drops the flock
            self.lock = None

    def stop(self, name: str) -> None:
        process = self.processes.get(name)
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)

    def remove_containers(self) -> None:
        """What the kubelet left: every task killed and deleted, every container deleted."""
        if "containerd" not in self.processes or self.processes["containerd"].poll() is not None:
            return
        try:
            tasks = [line.split()[0] for line in self.ctr("tasks", "ls").splitlines()[1:] if line.strip()]
            for task in tasks:
                subprocess.run(["ctr", "--address", str(self.socket), "-n", "k8s.io", "tasks", "delete", "-f", task],
                               capture_output=True)
            for container in self.ctr("containers", "ls", "-q").split():
                subprocess.run(["ctr", "--address", str(self.socket), "-n", "k8s.io", "containers", "delete",
                                container], capture_output=True)
        except RuntimeError:
            pass


def import_images(socket: Path, images: dict[str, Path], attempts: int = 3) -> None:
    """Docker-save tarballs into the node's containerd, under the names its CRI looks for; an import
    that fails is tried again: on this loaded machine containerd 1.6's import failed now and then
    while unpacking, with "content digest <the image's index>: not found" (seen for the pause and an
    operator image on a fresh node; cause not found). The import is idempotent."""
    for image_name, tarball in images.items():
        for attempt in range(1, attempts + 1):
            try:
                run(["ctr", "--address", str(socket), "-n", "k8s.io", "images", "import", "--index-name",
                     image_name, str(tarball)])
                break
            except RuntimeError as error:
                if attempt == attempts:
                    raise
                print(f"importing {image_name} failed (attempt {attempt} of {attempts}), again: {error}")
                # a plain second import failed the same way: the record the failed one left goes first
                subprocess.run(["ctr", "--address", str(socket), "-n", "k8s.io", "images", "rm", "--sync", image_name],
                               capture_output=True)


def node_processes(directory: Path) -> list[int]:
    """Processes whose command line names the node's folder (the containerd shims name its socket),
    or that run in one of the pods' cgroups."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if str(directory).encode() in (entry / "cmdline").read_bytes():
                    pids.add(int(entry.name))
            except OSError:
                pass
    for cgroup in our_cgroups():
        try:
            pids.update(int(p) for p in (cgroup / "cgroup.procs").read_text().split())
        except OSError:
            pass
    return sorted(pids)


def stale_node(left: list[str]) -> bool:
    """Whether what is left is a Herald node's, killed before its teardown ran: our bridge is there
    (no other Kubernetes makes herald0) and none of the node's processes runs. The node lock is held,
    so no live node of this machine owns it; a kube-proxy or kubelet still running means it is not stale."""
    return f"link {BRIDGE}" in left and not any(item.startswith("process ") for item in left)


def remove_stale_node() -> None:
    """What down() removes, for a node whose folder and processes are gone."""
    remove_chains()
    for table in nft_tables():
        if "kube" in table:
            subprocess.run(["nft", "delete", "table", *table.split()], capture_output=True)
    remove_pod_network(os.listdir(NETNS_DIR) if NETNS_DIR.is_dir() else [])


def remove_pod_network(netns_names) -> None:
    """The pods' network namespaces (CNI's cni-*) among `netns_names`, the pod cgroups, the bridge."""
    for netns in netns_names:
        if netns.startswith("cni-"):
            subprocess.run(["umount", str(NETNS_DIR / netns)], capture_output=True)
            subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
    for cgroup in our_cgroups():
        try:
            cgroup.rmdir()
        except OSError:
            pass
    subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)


def remove_chains() -> None:
    """Every KUBE-* and CNI-* chain in every table, and the rules that jump to them."""
    for command in ("iptables", "ip6tables"):
        for table in TABLES:
            chains, jumps = chains_and_jumps(command, table)
            for rule in jumps:
                subprocess.run([command, "-t", table, "-D", *rule], capture_output=True)
            for flag in ("-F", "-X"):
                for chain in chains:
                    subprocess.run([command, "-t", table, flag, chain], capture_output=True)


def nft_tables() -> set[str]:
    """The nf_tables tables, as "FAMILY NAME" (iptables-nft keeps its tables there)."""
    listed = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    return {line.removeprefix("table ").strip() for line in listed.splitlines() if line.startswith("table ")}


def unmount_under(directory: Path) -> None:
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for mount in reversed(mounts):
        if mount.startswith(str(directory) + "/"):
            subprocess.run(["umount", "-l", mount], capture_output=True)


def command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "(exited)"


def zombie(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def leftovers(directory: Path) -> list[str]:
    """What a node (this one, or one before it on this machine) left behind; empty when clean."""
    left = []
    left += [f"process {pid}: {command_line(pid)}" for pid in node_processes(directory)]
    for name in ("kubelet", "kube-proxy", "coredns", "containerd-shim"):
        found = subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout.split()
        # An exited process that its parent has not reaped yet (a zombie) holds nothing.
        left += [f"process {pid}: {name}" for pid in found if not zombie(int(pid))]
    left += [f"mount {line}" for line in Path("/proc/self/mounts").read_text().splitlines()
             if str(directory) + "/" in line or "/netns/cni-" in line]
    if NETNS_DIR.is_dir():
        left += [f"network namespace {n}" for n in os.listdir(NETNS_DIR) if n.startswith("cni-")]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    left += [f"link {line.split(':')[1].strip()}" for line in links.splitlines()
             if line.split(":")[1].strip().split("@")[0] == BRIDGE or f"master {BRIDGE}" in line]
    for command in ("iptables", "ip6tables"):
        for table in TABLES:
            chains, jumps = chains_and_jumps(command, table)
            left += [f"{command} -t {table} chain {c}" for c in chains]
            left += [f"{command} -t {table} rule -A {shlex.join(r)}" for r in jumps]
    nft = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True).stdout
    left += [f"nft {line}" for line in nft.splitlines() if "kube" in line]
    left += [f"cgroup {c}" for c in our_cgroups()]
    return left
