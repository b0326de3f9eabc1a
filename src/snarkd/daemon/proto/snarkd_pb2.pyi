from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    QUEUED: _ClassVar[JobState]
    RUNNING: _ClassVar[JobState]
    COMPLETED: _ClassVar[JobState]
    FAILED: _ClassVar[JobState]
    CANCELLED: _ClassVar[JobState]
    TIMEOUT: _ClassVar[JobState]
    EXPIRED: _ClassVar[JobState]
JOB_STATE_UNSPECIFIED: JobState
QUEUED: JobState
RUNNING: JobState
COMPLETED: JobState
FAILED: JobState
CANCELLED: JobState
TIMEOUT: JobState
EXPIRED: JobState

class KeyInfo(_message.Message):
    __slots__ = ("id", "path", "curve", "bytes", "n_vars", "n_public", "domain_size", "preloaded", "load_ms", "proofs", "resident", "devices", "last_used", "jobs", "evictions", "reloads")
    ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CURVE_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    N_VARS_FIELD_NUMBER: _ClassVar[int]
    N_PUBLIC_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_SIZE_FIELD_NUMBER: _ClassVar[int]
    PRELOADED_FIELD_NUMBER: _ClassVar[int]
    LOAD_MS_FIELD_NUMBER: _ClassVar[int]
    PROOFS_FIELD_NUMBER: _ClassVar[int]
    RESIDENT_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    EVICTIONS_FIELD_NUMBER: _ClassVar[int]
    RELOADS_FIELD_NUMBER: _ClassVar[int]
    id: str
    path: str
    curve: str
    bytes: int
    n_vars: int
    n_public: int
    domain_size: int
    preloaded: bool
    load_ms: float
    proofs: int
    resident: bool
    devices: _containers.RepeatedCompositeFieldContainer[KeyDevice]
    last_used: float
    jobs: int
    evictions: int
    reloads: int
    def __init__(self, id: _Optional[str] = ..., path: _Optional[str] = ..., curve: _Optional[str] = ..., bytes: _Optional[int] = ..., n_vars: _Optional[int] = ..., n_public: _Optional[int] = ..., domain_size: _Optional[int] = ..., preloaded: _Optional[bool] = ..., load_ms: _Optional[float] = ..., proofs: _Optional[int] = ..., resident: _Optional[bool] = ..., devices: _Optional[_Iterable[_Union[KeyDevice, _Mapping]]] = ..., last_used: _Optional[float] = ..., jobs: _Optional[int] = ..., evictions: _Optional[int] = ..., reloads: _Optional[int] = ...) -> None: ...

class KeyDevice(_message.Message):
    __slots__ = ("device", "bytes", "tables", "streamed")
    DEVICE_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    STREAMED_FIELD_NUMBER: _ClassVar[int]
    device: str
    bytes: int
    tables: bool
    streamed: bool
    def __init__(self, device: _Optional[str] = ..., bytes: _Optional[int] = ..., tables: _Optional[bool] = ..., streamed: _Optional[bool] = ...) -> None: ...

class LoadKeyRequest(_message.Message):
    __slots__ = ("key_id", "path", "wasm_path")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    WASM_PATH_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    path: str
    wasm_path: str
    def __init__(self, key_id: _Optional[str] = ..., path: _Optional[str] = ..., wasm_path: _Optional[str] = ...) -> None: ...

class LoadKeyReply(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: KeyInfo
    def __init__(self, key: _Optional[_Union[KeyInfo, _Mapping]] = ...) -> None: ...

class UnloadKeyRequest(_message.Message):
    __slots__ = ("key_id",)
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    def __init__(self, key_id: _Optional[str] = ...) -> None: ...

class UnloadKeyReply(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: KeyInfo
    def __init__(self, key: _Optional[_Union[KeyInfo, _Mapping]] = ...) -> None: ...

class ProveRequest(_message.Message):
    __slots__ = ("key_id", "witness", "job_id", "priority", "witnesses", "inputs_json", "witness_paths", "batch_verify", "deadline_s", "deadline_unix", "lane")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    WITNESS_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    WITNESSES_FIELD_NUMBER: _ClassVar[int]
    INPUTS_JSON_FIELD_NUMBER: _ClassVar[int]
    WITNESS_PATHS_FIELD_NUMBER: _ClassVar[int]
    BATCH_VERIFY_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_S_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    witness: bytes
    job_id: str
    priority: int
    witnesses: _containers.RepeatedScalarFieldContainer[bytes]
    inputs_json: _containers.RepeatedScalarFieldContainer[str]
    witness_paths: _containers.RepeatedScalarFieldContainer[str]
    batch_verify: bool
    deadline_s: float
    deadline_unix: float
    lane: str
    def __init__(self, key_id: _Optional[str] = ..., witness: _Optional[bytes] = ..., job_id: _Optional[str] = ..., priority: _Optional[int] = ..., witnesses: _Optional[_Iterable[bytes]] = ..., inputs_json: _Optional[_Iterable[str]] = ..., witness_paths: _Optional[_Iterable[str]] = ..., batch_verify: _Optional[bool] = ..., deadline_s: _Optional[float] = ..., deadline_unix: _Optional[float] = ..., lane: _Optional[str] = ...) -> None: ...

class ProveChunk(_message.Message):
    __slots__ = ("request", "partition_bytes", "data")
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    PARTITION_BYTES_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    request: ProveRequest
    partition_bytes: _containers.RepeatedScalarFieldContainer[int]
    data: bytes
    def __init__(self, request: _Optional[_Union[ProveRequest, _Mapping]] = ..., partition_bytes: _Optional[_Iterable[int]] = ..., data: _Optional[bytes] = ...) -> None: ...

class Span(_message.Message):
    __slots__ = ("stage", "worker", "start", "end")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    stage: str
    worker: str
    start: float
    end: float
    def __init__(self, stage: _Optional[str] = ..., worker: _Optional[str] = ..., start: _Optional[float] = ..., end: _Optional[float] = ...) -> None: ...

class PartitionResult(_message.Message):
    __slots__ = ("index", "proof_json", "public_json", "timings_ms", "spans")
    class TimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PROOF_JSON_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_JSON_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    SPANS_FIELD_NUMBER: _ClassVar[int]
    index: int
    proof_json: str
    public_json: str
    timings_ms: _containers.ScalarMap[str, float]
    spans: _containers.RepeatedCompositeFieldContainer[Span]
    def __init__(self, index: _Optional[int] = ..., proof_json: _Optional[str] = ..., public_json: _Optional[str] = ..., timings_ms: _Optional[_Mapping[str, float]] = ..., spans: _Optional[_Iterable[_Union[Span, _Mapping]]] = ...) -> None: ...

class ProveReply(_message.Message):
    __slots__ = ("job_id", "proof_json", "public_json", "timings_ms", "partitions")
    class TimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PROOF_JSON_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_JSON_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    proof_json: str
    public_json: str
    timings_ms: _containers.ScalarMap[str, float]
    partitions: _containers.RepeatedCompositeFieldContainer[PartitionResult]
    def __init__(self, job_id: _Optional[str] = ..., proof_json: _Optional[str] = ..., public_json: _Optional[str] = ..., timings_ms: _Optional[_Mapping[str, float]] = ..., partitions: _Optional[_Iterable[_Union[PartitionResult, _Mapping]]] = ...) -> None: ...

class SubmitReply(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class AwaitRequest(_message.Message):
    __slots__ = ("job_id", "timeout_s")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_S_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    timeout_s: float
    def __init__(self, job_id: _Optional[str] = ..., timeout_s: _Optional[float] = ...) -> None: ...

class AwaitReply(_message.Message):
    __slots__ = ("state", "error", "result")
    STATE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    state: JobState
    error: str
    result: ProveReply
    def __init__(self, state: _Optional[_Union[JobState, str]] = ..., error: _Optional[str] = ..., result: _Optional[_Union[ProveReply, _Mapping]] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class CancelReply(_message.Message):
    __slots__ = ("state", "cancelled")
    STATE_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    state: JobState
    cancelled: bool
    def __init__(self, state: _Optional[_Union[JobState, str]] = ..., cancelled: _Optional[bool] = ...) -> None: ...

class ListJobsRequest(_message.Message):
    __slots__ = ("states", "key_id", "limit", "lane")
    STATES_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedScalarFieldContainer[JobState]
    key_id: str
    limit: int
    lane: str
    def __init__(self, states: _Optional[_Iterable[_Union[JobState, str]]] = ..., key_id: _Optional[str] = ..., limit: _Optional[int] = ..., lane: _Optional[str] = ...) -> None: ...

class JobInfo(_message.Message):
    __slots__ = ("job_id", "key_id", "state", "priority", "partitions", "done", "submitted_unix", "finished_unix", "deadline_unix", "error", "client", "lane", "weight")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_UNIX_FIELD_NUMBER: _ClassVar[int]
    FINISHED_UNIX_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    key_id: str
    state: JobState
    priority: int
    partitions: int
    done: int
    submitted_unix: float
    finished_unix: float
    deadline_unix: float
    error: str
    client: str
    lane: str
    weight: float
    def __init__(self, job_id: _Optional[str] = ..., key_id: _Optional[str] = ..., state: _Optional[_Union[JobState, str]] = ..., priority: _Optional[int] = ..., partitions: _Optional[int] = ..., done: _Optional[int] = ..., submitted_unix: _Optional[float] = ..., finished_unix: _Optional[float] = ..., deadline_unix: _Optional[float] = ..., error: _Optional[str] = ..., client: _Optional[str] = ..., lane: _Optional[str] = ..., weight: _Optional[float] = ...) -> None: ...

class ListJobsReply(_message.Message):
    __slots__ = ("jobs",)
    JOBS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[JobInfo]
    def __init__(self, jobs: _Optional[_Iterable[_Union[JobInfo, _Mapping]]] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StatusReply(_message.Message):
    __slots__ = ("pid", "uptime_s", "version", "config_path", "config_fingerprint", "listen", "keys", "queued", "in_flight", "completed", "failed", "cancelled", "rss_bytes", "peak_rss_bytes", "devices", "workers", "state", "engine_json", "memory_budget_bytes", "memory_used_bytes", "memory_peak_bytes", "device_busy_s", "status_listen", "witness_spool", "spool_token", "witness_dirs", "expired", "lanes")
    class DeviceBusySEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    PID_FIELD_NUMBER: _ClassVar[int]
    UPTIME_S_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CONFIG_PATH_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    LISTEN_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    PEAK_RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEVICES_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ENGINE_JSON_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BUDGET_BYTES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_USED_BYTES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_PEAK_BYTES_FIELD_NUMBER: _ClassVar[int]
    DEVICE_BUSY_S_FIELD_NUMBER: _ClassVar[int]
    STATUS_LISTEN_FIELD_NUMBER: _ClassVar[int]
    WITNESS_SPOOL_FIELD_NUMBER: _ClassVar[int]
    SPOOL_TOKEN_FIELD_NUMBER: _ClassVar[int]
    WITNESS_DIRS_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    LANES_FIELD_NUMBER: _ClassVar[int]
    pid: int
    uptime_s: float
    version: str
    config_path: str
    config_fingerprint: str
    listen: str
    keys: _containers.RepeatedCompositeFieldContainer[KeyInfo]
    queued: int
    in_flight: int
    completed: int
    failed: int
    cancelled: int
    rss_bytes: int
    peak_rss_bytes: int
    devices: _containers.RepeatedScalarFieldContainer[str]
    workers: int
    state: str
    engine_json: str
    memory_budget_bytes: int
    memory_used_bytes: int
    memory_peak_bytes: int
    device_busy_s: _containers.ScalarMap[str, float]
    status_listen: str
    witness_spool: str
    spool_token: str
    witness_dirs: _containers.RepeatedScalarFieldContainer[str]
    expired: int
    lanes: _containers.RepeatedCompositeFieldContainer[LaneInfo]
    def __init__(self, pid: _Optional[int] = ..., uptime_s: _Optional[float] = ..., version: _Optional[str] = ..., config_path: _Optional[str] = ..., config_fingerprint: _Optional[str] = ..., listen: _Optional[str] = ..., keys: _Optional[_Iterable[_Union[KeyInfo, _Mapping]]] = ..., queued: _Optional[int] = ..., in_flight: _Optional[int] = ..., completed: _Optional[int] = ..., failed: _Optional[int] = ..., cancelled: _Optional[int] = ..., rss_bytes: _Optional[int] = ..., peak_rss_bytes: _Optional[int] = ..., devices: _Optional[_Iterable[str]] = ..., workers: _Optional[int] = ..., state: _Optional[str] = ..., engine_json: _Optional[str] = ..., memory_budget_bytes: _Optional[int] = ..., memory_used_bytes: _Optional[int] = ..., memory_peak_bytes: _Optional[int] = ..., device_busy_s: _Optional[_Mapping[str, float]] = ..., status_listen: _Optional[str] = ..., witness_spool: _Optional[str] = ..., spool_token: _Optional[str] = ..., witness_dirs: _Optional[_Iterable[str]] = ..., expired: _Optional[int] = ..., lanes: _Optional[_Iterable[_Union[LaneInfo, _Mapping]]] = ...) -> None: ...

class LaneInfo(_message.Message):
    __slots__ = ("name", "priority", "share", "max_queued", "deadline_s", "queued", "running", "weight", "slots", "reserved_slots", "expired", "deadline_missed", "completed")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    SHARE_FIELD_NUMBER: _ClassVar[int]
    MAX_QUEUED_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_S_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    RESERVED_SLOTS_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MISSED_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    name: str
    priority: int
    share: float
    max_queued: float
    deadline_s: float
    queued: int
    running: int
    weight: float
    slots: int
    reserved_slots: int
    expired: int
    deadline_missed: int
    completed: int
    def __init__(self, name: _Optional[str] = ..., priority: _Optional[int] = ..., share: _Optional[float] = ..., max_queued: _Optional[float] = ..., deadline_s: _Optional[float] = ..., queued: _Optional[int] = ..., running: _Optional[int] = ..., weight: _Optional[float] = ..., slots: _Optional[int] = ..., reserved_slots: _Optional[int] = ..., expired: _Optional[int] = ..., deadline_missed: _Optional[int] = ..., completed: _Optional[int] = ...) -> None: ...

class MetricsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MetricsReply(_message.Message):
    __slots__ = ("values", "text")
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    VALUES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    values: _containers.ScalarMap[str, float]
    text: str
    def __init__(self, values: _Optional[_Mapping[str, float]] = ..., text: _Optional[str] = ...) -> None: ...

class InlineProof(_message.Message):
    __slots__ = ("proof_json", "public_json")
    PROOF_JSON_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_JSON_FIELD_NUMBER: _ClassVar[int]
    proof_json: str
    public_json: str
    def __init__(self, proof_json: _Optional[str] = ..., public_json: _Optional[str] = ...) -> None: ...

class AggregateRequest(_message.Message):
    __slots__ = ("key_id", "srs_path", "job_ids", "proofs")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    SRS_PATH_FIELD_NUMBER: _ClassVar[int]
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    PROOFS_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    srs_path: str
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    proofs: _containers.RepeatedCompositeFieldContainer[InlineProof]
    def __init__(self, key_id: _Optional[str] = ..., srs_path: _Optional[str] = ..., job_ids: _Optional[_Iterable[str]] = ..., proofs: _Optional[_Iterable[_Union[InlineProof, _Mapping]]] = ...) -> None: ...

class AggregateReply(_message.Message):
    __slots__ = ("aggregate_json", "n", "dev_srs", "timings_ms")
    class TimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    AGGREGATE_JSON_FIELD_NUMBER: _ClassVar[int]
    N_FIELD_NUMBER: _ClassVar[int]
    DEV_SRS_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    aggregate_json: str
    n: int
    dev_srs: bool
    timings_ms: _containers.ScalarMap[str, float]
    def __init__(self, aggregate_json: _Optional[str] = ..., n: _Optional[int] = ..., dev_srs: _Optional[bool] = ..., timings_ms: _Optional[_Mapping[str, float]] = ...) -> None: ...
