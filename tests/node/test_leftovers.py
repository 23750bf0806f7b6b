"""The teardown check can fail: it sees a chain of the node's kind and the rule that jumps to it, and
the teardown's chain removal takes both away. Runs only where no node is up (before the node tests'
own node starts, by file order; after the shared cluster is gone)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from realnode import leftovers, nft_tables, remove_chains
from sharedcluster import attach

PROBE = "KUBE-HERALD-PROBE"


def test_a_left_chain_and_its_jump_are_found_and_removed(tmp_path: Path):
    if attach():
        pytest.skip("removing every KUBE-* chain would take the running shared node's away; "
                    "scripts/k8s/test-cluster.sh runs this test after the shared cluster is gone")
    tables_before = nft_tables()
    subprocess.run(["iptables", "-t", "filter", "-N", PROBE], check=True)
    subprocess.run(["iptables", "-t", "filter", "-A", "OUTPUT", "-p", "tcp", "--dport", "9", "-j", PROBE], check=True)
    try:
        found = leftovers(tmp_path)
        assert f"iptables -t filter chain {PROBE}" in found, found
        assert any(entry.startswith("iptables -t filter rule -A OUTPUT") and PROBE in entry for entry in found), found
        remove_chains()
        assert not [entry for entry in leftovers(tmp_path) if PROBE in entry]
    finally:
        subprocess.run(["iptables", "-t", "filter", "-D", "OUTPUT", "-p", "tcp", "--dport", "9", "-j", PROBE],
                       capture_output=True)
        subprocess.run(["iptables", "-t", "filter", "-X", PROBE], capture_output=True)
        for table in nft_tables() - tables_before:  # iptables-nft made it for the probe
            subprocess.run(["nft", "delete", "table", *table.split()], capture_output=True)
