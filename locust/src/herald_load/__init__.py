"""Herald load tests: the platform on free local ports, provisioning through the admin API, the
scale-out runner (local processes or Kubernetes) and the helpers the Locust scenarios share.

The scenarios themselves are the locustfiles in ``locust/scenarios/``; the capacity model that
reads what the runner writes is the sibling package :mod:`herald_capacity`.
"""
