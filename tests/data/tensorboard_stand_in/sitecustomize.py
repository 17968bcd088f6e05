"""Test stand-in for torch.utils.tensorboard alone (see README.md): real torch stays in use.

Python imports sitecustomize at start from the first folder on its path that has one; the tests
put this folder on the trials' PYTHONPATH, so every trial process (and every rank a launcher
starts) finds torch.utils.tensorboard here, and every other torch module where Debian put it.

It also mends one function of Debian 12's torch 1.13, which predates Python 3.11 (README.md):
torch.distributed.run's Std.from_str("0") is None there, so the launcher fails before it starts
a worker. Nothing else of torch is touched, and nothing where the function works.
"""
import importlib.abc
import importlib.util
import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_STD_MODULE = "torch.distributed.elastic.multiprocessing.api"


class _TensorboardStandIn(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "torch.utils.tensorboard":
            return None
        return importlib.util.spec_from_file_location(
            name, os.path.join(_HERE, "summary_writer.py")
        )


def _mend_std(std):
    """Std.from_str as torch meant it: Python 3.11 no longer yields an IntFlag's 0 member when
    iterating, which torch 1.13's version relies on."""
    if std.from_str("0") is not None:
        return

    def from_str(cls, text):
        if re.fullmatch(r"\d", text):
            return cls(int(text))
        if re.fullmatch(r"(\d:\d)(,\d:\d)*", text):
            return {int(i): cls(int(v)) for i, v in (m.split(":") for m in text.split(","))}
        raise ValueError(f"{text} is neither a stream number nor rank:number pairs")

    std.from_str = classmethod(from_str)


class _StdMender(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != _STD_MODULE:
            return None
        for finder in sys.meta_path:
            if isinstance(finder, (_StdMender, _TensorboardStandIn)):
                continue
            spec = finder.find_spec(name, path, target) if hasattr(finder, "find_spec") else None
            if spec is not None:
                break
        else:
            return None
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _mend_std(module.Std)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path[:0] = [_TensorboardStandIn(), _StdMender()]
