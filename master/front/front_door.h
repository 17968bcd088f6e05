#pragma once

#include <zmq.hpp>

#include "common/clock.h"
#include "master/experiments/model_registry.h"
#include "master/front/actor_calls.h"
#include "master/front/master_calls.h"
#include "master/front/record_reads.h"

namespace det::master {

// What both gateways (the CLI's REQ/REP and the HTTP wing) call, in its four parts: the
// forwarded methods, checked for the caller (actor_calls.h); the reads answered from PostgreSQL
// (record_reads.h); what the master answers about itself (master_calls.h); the model registry
// (master/experiments/model_registry.h). Each part is
// thread-safe once the master has set it up. `clock` is the master's: the gateways' deadlines,
// ages and timestamps read it.
class FrontDoor {
 public:
  // `context`, `clock`, `database` and `users` outlive the front door.
  FrontDoor(zmq::context_t& context, const Clock& clock, storage::Database& database,
            auth::Users& users, bus::MasterInfo info, const ResourcesConfig& resources,
            int64_t max_message_bytes)
      : clock(clock),
        calls(context, users, std::move(info), max_message_bytes),
        reads(database),
        master(calls, reads, database, resources),
        models(database) {}

  const Clock& clock;
  ActorCalls calls;
  RecordReads reads;
  MasterCalls master;
  ModelRegistry models;  // the model registry, read and written by the HTTP wing
};

}  // namespace det::master
