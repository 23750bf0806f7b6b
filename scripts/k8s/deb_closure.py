"""The .deb files of some packages and everything they depend on, from a `debootstrap --foreign` root
(its debootstrap/debpaths lists every package it downloaded and where the .deb is).

    python3 deb_closure.py ROOT PACKAGE[,PACKAGE...] [EXCLUDED[,EXCLUDED...]]

prints one .deb path a line, sorted. Of alternatives (a | b) the first one the root has is taken; a
virtual package is resolved through the Provides of the root's packages. Excluded packages are left
out with what only they would bring in (e.g. adduser, whose work the image's own passwd does).
Used by scripts/k8s/images.sh for the RabbitMQ image.
"""

from __future__ import annotations

import re
import subprocess
import sys


def control(deb: str) -> dict[str, str]:
    printed = subprocess.run(["dpkg-deb", "-f", deb, "Depends", "Pre-Depends", "Provides"],
                             capture_output=True, text=True, check=True).stdout
    return dict(re.findall(r"^([\w-]+): (.*)$", printed, re.M))


def closure(root: str, wanted: list[str], excluded: set[str]) -> list[str]:
    debs = dict(line.split(" ", 1) for line in open(f"{root}/debootstrap/debpaths").read().splitlines())
    depends, provides = {}, {}
    for name, path in debs.items():
        fields = control(root + path)
        depends[name] = [d.strip() for d in f"{fields.get('Depends', '')},{fields.get('Pre-Depends', '')}".split(",")
                         if d.strip()]
        for provided in filter(None, (p.strip() for p in fields.get("Provides", "").split(","))):
            provides.setdefault(provided.split()[0], name)

    def resolve(alternatives: str) -> str | None:
        for alternative in alternatives.split("|"):
            name = alternative.split()[0].split(":")[0]  # python3:any -> python3
            if name in debs:
                return name
            if name in provides:
                return provides[name]
        return None

    found, todo = set(), list(wanted)
    while todo:
        name = todo.pop()
        if name in found or name in excluded:
            continue
        if name not in debs:
            sys.exit(f"{name}: not among the packages of {root}")
        found.add(name)
        for dependency in depends[name]:
            package = resolve(dependency)
            if package is None:
                sys.exit(f"{name} depends on {dependency}: not among the packages of {root}")
            todo.append(package)
    return sorted(root + debs[name] for name in found)


if __name__ == "__main__":
    excluded = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else set()
    print("\n".join(closure(sys.argv[1], sys.argv[2].split(","), excluded)))
