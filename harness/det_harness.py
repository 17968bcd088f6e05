"""The Core API client for trial code (Python standard library only).

A trial's run gets this module in its working folder (the master serves it and the run's
launcher puts it there), so trial code just does::

    import det_harness
    ctx = det_harness.init()
    state = ctx.load_checkpoint() or fresh_state()        # resume where the trial stood
    while state["steps"] < ctx.max_length:
        ...train one batch...
        ctx.report_training_metrics(steps, {"loss": loss})
        if time_to_validate:
            ctx.report_validation_metrics(steps, {"validation_loss": v})
            ctx.save_checkpoint(steps, state)
            if ctx.should_preempt():                     # paused, preempted or stopped by the
                return                                   # searcher: exit 0, resume later

Everything comes from the environment the master gives the run: DET_MASTER_URL, DET_SESSION_TOKEN
(the allocation's token), DET_TRIAL_ID, DET_EXPERIMENT_ID, DET_ALLOCATION_ID, DET_HPARAMS,
DET_LATEST_CHECKPOINT, DET_CHECKPOINT_DIR, DET_MAX_LENGTH, DET_TIME_METRIC, DET_SEARCHER_METRIC,
DET_EXPERIMENT_CONFIG (its checkpoint_storage: a shared_fs folder, an s3 bucket or a gcs
bucket, through det_storage.py and det_gcs.py beside this module);
a trial spread over several agents runs one container on each, told DET_CONTAINER_RANK and
DET_NUM_CONTAINERS, which meet through rendezvous() (only the chief, rank 0, should report).
Calls retry while the master is unreachable (it may be restarting) and raise CoreApiError on an
answer that refuses them.
"""

import contextlib
import json
import os
import random
import signal
import socket
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

__all__ = ["init", "Context", "CoreApiError"]

_RETRY_FOR_SECONDS = 300


class CoreApiError(Exception):
    """The master refused a call (bad input, wrong token, unknown trial)."""


class Context:
    """One trial run's view of the Core API."""

    def __init__(self, env=None):
        env = os.environ if env is None else env
        self.master_url = env["DET_MASTER_URL"].rstrip("/")
        # An HTTPS master's certificate comes with the run: the one to trust.
        cert = env.get("DET_MASTER_CERT")
        self.tls = ssl.create_default_context(cadata=cert) if cert else None
        self.token = env["DET_SESSION_TOKEN"]
        self.trial_id = int(env["DET_TRIAL_ID"])
        self.experiment_id = int(env["DET_EXPERIMENT_ID"])
        self.allocation_id = env.get("DET_ALLOCATION_ID", "")
        self.run_id = int(env.get("DET_RUN_ID", "1"))
        self.trial_seed = int(env.get("DET_TRIAL_SEED", "0"))
        self.hparams = json.loads(env.get("DET_HPARAMS", "{}"))
        self.latest_checkpoint = env.get("DET_LATEST_CHECKPOINT") or None
        self.checkpoint_dir = env.get("DET_CHECKPOINT_DIR", "")
        config = json.loads(env.get("DET_EXPERIMENT_CONFIG") or "{}")
        self.checkpoint_storage = config.get("checkpoint_storage") or {"type": "shared_fs"}
        self._env = env
        self._storage = None  # det_storage's store, opened at the first checkpoint
        self.max_length = int(env.get("DET_MAX_LENGTH", "0"))
        self.time_metric = env.get("DET_TIME_METRIC", "batches")
        self.searcher_metric = env.get("DET_SEARCHER_METRIC", "")
        self.validation_period = int(env.get("DET_MIN_VALIDATION_PERIOD", "0")) or None
        self.container_rank = int(env.get("DET_CONTAINER_RANK", "0"))
        self.num_containers = int(env.get("DET_NUM_CONTAINERS", "1"))
        self.slot_ids = _slot_ids(env.get("DET_SLOT_IDS", ""))
        self.gloo_port_range = env.get("DET_GLOO_PORT_RANGE", "1024:65535")
        self._terminated = False
        self._stop_reason = ""
        self._asked_at = 0.0  # monotonic time of should_preempt's last question to the master

    # --- transport -------------------------------------------------------------------------

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Grpc-Metadata-x-allocation-token": "Bearer " + self.token,
                   "Content-Type": "application/json"}
        deadline = time.monotonic() + _RETRY_FOR_SECONDS
        delay = 0.2
        while True:
            request = urllib.request.Request(
                self.master_url + path, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(request, timeout=700, context=self.tls) as response:
                    return json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as e:
                detail = e.read().decode(errors="replace")
                if e.code < 500:
                    raise CoreApiError("%s %s: %s %s" % (method, path, e.code, detail)) from None
                failure = "%s %s" % (e.code, detail)
            except OSError as e:
                failure = str(e)
            if time.monotonic() > deadline:
                raise CoreApiError("%s %s: master unreachable: %s" % (method, path, failure))
            time.sleep(delay)
            delay = min(delay * 2, 5)

    def _trial_path(self, what):
        return "/api/v1/trials/%d/%s" % (self.trial_id, what)

    def _note_signal(self, answer):
        if answer.get("preempt"):
            self._stop_reason = answer.get("reason", "") or "asked to stop"
        return answer

    # --- metrics ---------------------------------------------------------------------------

    def _report_metrics(self, group, steps_completed, metrics):
        # Determined's ReportTrialMetrics body, as its library sends it.
        self._note_signal(self._call("POST", self._trial_path("metrics"), {
            "group": group,
            "metrics": {"trialId": self.trial_id, "trialRunId": self.run_id,
                        "stepsCompleted": steps_completed, "reportTime": None,
                        "metrics": {"avgMetrics": metrics, "batchMetrics": None}}}))

    def report_training_metrics(self, steps_completed, metrics):
        """Stores training metrics at `steps_completed` (a step sent again is stored once)."""
        self._report_metrics("training", steps_completed, metrics)

    def report_validation_metrics(self, steps_completed, metrics):
        """Stores validation metrics; the searcher sees them (with the time metric added)."""
        metrics = dict(metrics)
        metrics.setdefault(self.time_metric, steps_completed)
        self._report_metrics("validation", steps_completed, metrics)

    def report_progress(self, fraction):
        self._call("POST", self._trial_path("progress"),
                   {"progress": float(fraction), "is_raw": True})

    def report_early_exit(self, reason="ERRORED"):
        """ERRORED, INVALID_HP or USER_CANCELED: the trial cannot go on (then exit)."""
        wire = {"USER_CANCELED": "USER_REQUESTED_STOP"}.get(reason, reason)
        self._call("POST", self._trial_path("early_exit"), {"reason": "EXITED_REASON_" + wire})

    # --- checkpoints (det_storage: shared_fs, s3 or gcs) ------------------------------------

    def _store(self):
        if self._storage is None:
            import det_storage  # beside this module in the run's folder
            self._storage = det_storage.open_storage(self.checkpoint_storage, self._env)
        return self._storage

    @contextlib.contextmanager
    def store_checkpoint(self, steps_completed, metadata=None):
        """Yields (folder, uuid): write the checkpoint's files into the folder; when the block
        ends they are stored (renamed in place for shared_fs, uploaded to the bucket for s3) and
        the checkpoint is registered. A block that raises, or a store that fails, stores nothing
        (for s3 the objects already uploaded are deleted again)."""
        store = self._store()
        checkpoint_uuid = str(uuid.uuid4())
        staged = store.staging_folder(checkpoint_uuid)
        try:
            yield staged, checkpoint_uuid
        except BaseException:
            store.discard(staged)
            raise
        try:
            resources = store.commit(staged, checkpoint_uuid)
        except BaseException:
            store.discard(staged)  # a shared_fs folder half renamed, or S3's staging copy
            raise
        metadata = dict(metadata or {})
        metadata["steps_completed"] = steps_completed
        self._note_signal(self._call("POST", "/api/v1/checkpoints", {
            "uuid": checkpoint_uuid, "metadata": metadata, "resources": resources,
            "allocationId": self.allocation_id, "state": "STATE_COMPLETED"}))
        self.latest_checkpoint = checkpoint_uuid

    def restore_checkpoint(self, checkpoint_uuid=None):
        """A local folder with the files of the checkpoint (default: the latest), or None for a
        trial that has none. For s3 they are downloaded under the run's folder."""
        checkpoint_uuid = checkpoint_uuid or self.latest_checkpoint
        if not checkpoint_uuid:
            return None
        return self._store().restore(checkpoint_uuid, os.getcwd())

    def save_checkpoint(self, steps_completed, state, metadata=None):
        """Writes `state` (JSON-serialisable) as a new checkpoint and registers it; its uuid."""
        with self.store_checkpoint(steps_completed, metadata) as (folder, checkpoint_uuid):
            with open(os.path.join(folder, "state.json"), "w") as f:
                json.dump({"steps_completed": steps_completed, "state": state}, f)
        return checkpoint_uuid

    def load_checkpoint(self):
        """The state the latest checkpoint saved, or None for a trial that has none."""
        folder = self.restore_checkpoint()
        if folder is None:
            return None
        with open(os.path.join(folder, "state.json")) as f:
            return json.load(f)["state"]

    # --- preemption ------------------------------------------------------------------------

    def should_preempt(self, wait_seconds=0):
        """Whether this run should checkpoint and exit now (the experiment paused or was
        canceled, the scheduler preempted it, its machine is being taken away, the searcher has
        what it needs, or SIGTERM). Cheap enough to call every batch: without `wait_seconds` it
        asks the master at most once a second (SIGTERM and signals that came with reports are
        seen at once)."""
        if self._terminated or self._stop_reason:
            return True
        now = time.monotonic()
        if not wait_seconds and now - self._asked_at < 1.0:
            return False
        self._asked_at = now
        answer = self._call(
            "GET", "/api/v1/allocations/%s/signals/preemption?timeout_seconds=%d"
            % (self.allocation_id, int(wait_seconds)))
        self._note_signal(answer)
        return bool(self._stop_reason)

    # --- distributed trials -----------------------------------------------------------------

    def rendezvous(self):
        """For a trial spread over several agents (one container on each): blocks until every
        container has called it, then returns {"rank", "num_containers", "addresses", "slots",
        "world_size", "chief_address", "chief_port", "gloo_port_range", "nccl_port_range"}.
        The chief (rank 0) offers a free port from gloo_port_range as chief_port, for the
        containers' own process group (torch.distributed's MASTER_ADDR and MASTER_PORT, say).
        If a container never arrives, the master fails the allocation after
        task_container_defaults.rendezvous_timeout and this raises CoreApiError."""
        port = _free_port(self.gloo_port_range) if self.container_rank == 0 else 0
        return self._call("POST", "/api/v1/allocations/%s/rendezvous" % self.allocation_id, {
            "rank": self.container_rank, "num_containers": self.num_containers,
            "address": self._own_address(), "port": port, "slots": len(self.slot_ids)})

    def _own_address(self):
        """The address this host reaches the master from: the one other containers can use."""
        host = urllib.parse.urlsplit(self.master_url).hostname or "127.0.0.1"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((host, 9))  # UDP: nothing is sent, the route is chosen
            return probe.getsockname()[0]

    @property
    def stop_reason(self):
        return self._stop_reason or ("terminated" if self._terminated else "")

    def _on_sigterm(self, signum, frame):
        self._terminated = True


def _slot_ids(text):
    """DET_SLOT_IDS as a trial run has it (a JSON list, as Determined's), or comma-separated."""
    if text.startswith("["):
        return [str(s) for s in json.loads(text)]
    return [s for s in text.split(",") if s]


def _free_port(port_range):
    """A port in "MIN:MAX" that nothing listens on now."""
    first, last = (int(p) for p in port_range.split(":"))
    for _ in range(200):
        port = random.randint(first, last)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("", port))
                return port
            except OSError:
                continue
    raise CoreApiError("no free port in gloo_port_range %s" % port_range)


def init(env=None):
    """The run's Context; SIGTERM from then on only sets should_preempt()."""
    context = Context(env)
    signal.signal(signal.SIGTERM, context._on_sigterm)
    return context

