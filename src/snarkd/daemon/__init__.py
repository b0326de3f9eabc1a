"""The snarkd daemon: a gRPC proving service with a verified lifecycle.

    config.py     the TOML config, validated up front; its fingerprint
    server.py     the daemon process: startup, main loop, drain on SIGTERM
    service.py    the gRPC servicer (snarkd.v1.Prover), its error mapping and roles
    security.py   TLS credentials, bearer tokens and roles, the control socket
    journal.py    durable jobs: the SQLite journal and the request spool
    engine.py     adapter: the pipelined engine lives in snarkd.engine
    metrics.py    Prometheus /metrics and /status JSON over HTTP ([daemon] status_listen)
    lifecycle.py  start / stop / restart / status as the CLI runs them
    pidfile.py    the locked pid file;  netcheck.py  who holds an address
    client.py     the Python client
"""
