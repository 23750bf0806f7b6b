"""Herald's benchmarks (``scripts/bench.sh``, :mod:`herald_load.bench.run`) and their clients:
:mod:`.fanout` (one topic push to N FCM tokens), :mod:`.mqtt` (connection-manager connections
and delivery), ``send.lua`` (wrk's accept run). Standard library only.
"""
