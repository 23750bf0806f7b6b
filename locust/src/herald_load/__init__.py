"""Herald's Python toolkit for everything off-cluster: the platform as local processes (on free
ports for load runs and tests, or on the well-known ports of ``scripts/run-local.sh``:
:mod:`.local`, :mod:`.localrun`, :mod:`.servers`, :mod:`.processes`), provisioning apps through the
admin API (:mod:`.provisioning`), the demo (:mod:`.demo`), the benchmarks (:mod:`.bench`), the
scale-out runner (local processes or Kubernetes) and the helpers the Locust scenarios share.

The scenarios themselves are the locustfiles in ``locust/scenarios/``; the capacity model that
reads what the runner writes is the sibling package :mod:`herald_capacity`.
"""
