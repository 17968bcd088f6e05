#pragma once

// Where a checkpoint's objects are in its bucket: the layout Determined's storage managers write
// (`<prefix>/<uuid>/<file>`, the prefix normalized as its normalize_prefix does), so that
// checkpoints written by its library and by det_harness are found and removed alike.

#include <cstdint>
#include <string>

namespace det::object_store {

// Python's os.path.normpath(prefix).lstrip("/") for a non-empty prefix (empty segments and "."
// dropped, "x/.." folded); "" for "". A prefix that is only "." stays "." (as Determined keeps
// it).
std::string NormalizePrefix(const std::string& prefix);

// "<normalized prefix>/<uuid>/" (or "<uuid>/" without a prefix): every object of the checkpoint
// starts with it.
std::string CheckpointKeyPrefix(const std::string& prefix, const std::string& uuid);

// "<normalized prefix>/<cluster id>/tensorboard/experiment/<id>/": where Determined's library
// syncs an experiment's TensorBoard files (its tensorboard/build.py), in the checkpoints' bucket.
std::string TensorboardKeyPrefix(const std::string& prefix, const std::string& cluster_id,
                                 int64_t experiment_id);

}  // namespace det::object_store
