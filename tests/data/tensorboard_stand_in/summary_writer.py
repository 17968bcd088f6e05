"""torch.utils.tensorboard.SummaryWriter for tests: scalars as JSON lines in log_dir."""
import json
import os


class SummaryWriter:
    def __init__(self, log_dir=None, **_):
        self.log_dir = log_dir or "."
        os.makedirs(self.log_dir, exist_ok=True)
        self._file = None

    def add_scalar(self, tag, value, step=None, *_, **__):
        if self._file is None:
            self._file = open(os.path.join(self.log_dir, "scalars.jsonl"), "a")
        self._file.write(json.dumps({"tag": tag, "value": float(value), "step": step}) + "\n")

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None
