"""The snarkd daemon: a gRPC proving service with a verified lifecycle, over one engine contract
(snarkd.engine.contract: an Engine in this process, or the cluster front).

    server.py     the daemon process: startup (named steps), main loop, drain on SIGTERM
    service.py    the gRPC servicer (snarkd.v1.Prover), its error mapping and roles
    status.py     the status record and its one mapping to the proto, /status and engine_json
    metrics.py    Prometheus /metrics and /status JSON over HTTP ([daemon] status_listen)
    security.py   TLS credentials, bearer tokens and roles, the control socket
    journal.py    durable jobs: the SQLite journal and the request spool
    transport.py  how witnesses arrive: inline, streamed, by path (the spool, [transport] witness_dirs)
    lifecycle.py  start / stop / restart / status as the CLI runs them
    pidfile.py    the locked pid file;  netcheck.py  who holds an address
    client.py     the Python client;  doctor.py  `snarkd doctor`'s checks
"""
