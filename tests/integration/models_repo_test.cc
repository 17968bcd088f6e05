// The model registry's SQL (storage/models_repo.h) against a real PostgreSQL: names and ids,
// filters and sorts, version numbers, and what registering a checkpoint does to its experiment's
// garbage collection and deletion.
#include "storage/models_repo.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "storage/experiments_repo.h"
#include "storage/users_repo.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage {
namespace {

using det::testing::InTransaction;
using det::testing::PostgresEnvironment;

constexpr const char* kModelUuidA = "7a3f4b2e-6c1d-4e0a-9a51-5a0f2a1d7c01";
constexpr const char* kModelUuidB = "7a3f4b2e-6c1d-4e0a-9a51-5a0f2a1d7c02";
constexpr const char* kModelUuidC = "7a3f4b2e-6c1d-4e0a-9a51-5a0f2a1d7c03";

class ModelsRepoTest : public ::testing::Test {
 protected:
  DbConfig db_ = PostgresEnvironment::Get()->MigratedDatabase();

  int64_t AddModel(const std::string& name, const std::string& labels = "[]",
                   std::optional<int64_t> user = std::nullopt) {
    return InTransaction(db_, [&](pqxx::work& tx) {
      storage::NewModel model;
      model.name = name;
      model.labels_json = labels;
      model.user_id = user;
      return *CreateModel(tx, model);
    });
  }
  ModelVersionRecord Register(int64_t model, const std::string& uuid) {
    return InTransaction(db_, [&](pqxx::work& tx) {
      NewModelVersion version;
      version.checkpoint_uuid = uuid;
      version.checkpoint_json = R"({"uuid": ")" + uuid + R"("})";
      version.storage_json = R"({"config": "checkpoint_storage: {type: shared_fs}"})";
      auto created = CreateModelVersion(tx, model, version);
      EXPECT_TRUE(created.ok()) << created.status().ToString();
      return *created;
    });
  }
  // A finished experiment whose one trial has COMPLETED checkpoints kModelUuidA (step 100) and
  // kModelUuidB (step 200): (experiment, trial).
  std::pair<int64_t, int64_t> ExperimentWithTwoCheckpoints() {
    const int64_t experiment = InTransaction(db_, [](pqxx::work& tx) {
      return CreateExperiment(
          tx, {"e", "searcher: {name: single}\n", "COMPLETED", std::nullopt, std::nullopt});
    });
    const int64_t trial = InTransaction(
        db_, [&](pqxx::work& tx) { return CreateTrial(tx, experiment, "1", "{}", "COMPLETED"); });
    InTransaction(db_, [&](pqxx::work& tx) {
      for (const auto& [uuid, steps] : {std::pair{kModelUuidA, 100}, std::pair{kModelUuidB, 200}}) {
        EXPECT_TRUE(SaveCheckpoint(tx, {uuid, trial, steps, "COMPLETED", R"({"w.pt": 10})"}).ok());
      }
    });
    return {experiment, trial};
  }
  std::vector<std::string> Names(const ModelQuery& query) {
    return InTransaction(db_, [&](pqxx::work& tx) {
      std::vector<std::string> names;
      for (const auto& model : ListModels(tx, query).models) names.push_back(model.name);
      return names;
    });
  }
};

TEST_F(ModelsRepoTest, ModelsAreFoundByNameOrByIdAndANameIsTakenOnce) {
  const int64_t bob =
      InTransaction(db_, [](pqxx::work& tx) { return *CreateUser(tx, "bob", "h", false); });
  const int64_t id = AddModel("mnist-cnn", "[]", bob);
  InTransaction(db_, [&](pqxx::work& tx) {
    auto by_name = FindModel(tx, "mnist-cnn");
    ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();
    EXPECT_EQ(by_name->id, id);
    EXPECT_EQ(by_name->username, "bob");
    EXPECT_EQ(by_name->num_versions, 0);
    EXPECT_GT(by_name->created_ns, 0);
    EXPECT_EQ(FindModel(tx, std::to_string(id))->name, "mnist-cnn");
    EXPECT_EQ(FindModel(tx, "other").status().code(), StatusCode::kNotFound);
    EXPECT_EQ(FindModel(tx, "999999").status().code(), StatusCode::kNotFound);
    storage::NewModel again;
    again.name = "mnist-cnn";
    auto taken = CreateModel(tx, again);
    EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
    EXPECT_NE(taken.status().message().find("mnist-cnn"), std::string::npos);
  });
}

TEST_F(ModelsRepoTest, ListsFilterByNamePartLabelsAndArchivedAndSortEitherWay) {
  const int64_t a = AddModel("Alpha-net", R"(["vision", "prod"])");
  AddModel("beta-net", R"(["vision"])");
  AddModel("gamma", R"(["text"])");
  InTransaction(db_, [&](pqxx::work& tx) {
    ModelChange archive;
    archive.archived = true;
    ASSERT_TRUE(UpdateModel(tx, a, archive).ok());
  });
  ModelQuery query;
  query.sort_by = "name";
  EXPECT_EQ(Names(query), (std::vector<std::string>{"Alpha-net", "beta-net", "gamma"}));
  query.descending = true;
  EXPECT_EQ(Names(query), (std::vector<std::string>{"gamma", "beta-net", "Alpha-net"}));
  ModelQuery part;
  part.name = "NET";  // a part, any case
  part.sort_by = "name";
  EXPECT_EQ(Names(part), (std::vector<std::string>{"Alpha-net", "beta-net"}));
  ModelQuery labels;
  labels.labels = {"vision", "prod"};  // every one of them
  EXPECT_EQ(Names(labels), (std::vector<std::string>{"Alpha-net"}));
  ModelQuery live;
  live.archived = false;
  live.sort_by = "name";
  EXPECT_EQ(Names(live), (std::vector<std::string>{"beta-net", "gamma"}));
  ModelQuery elsewhere;
  elsewhere.workspace_ids = {-1};  // a workspace that does not exist holds none
  EXPECT_TRUE(Names(elsewhere).empty());
  // Pages are PostgreSQL's (OFFSET, LIMIT), counted before paging; a negative offset counts from
  // the end, as Determined's.
  ModelQuery page = query;  // by name, descending
  page.offset = 1;
  page.limit = 1;
  EXPECT_EQ(Names(page), (std::vector<std::string>{"beta-net"}));
  page.offset = -2;
  page.limit = 0;
  EXPECT_EQ(Names(page), (std::vector<std::string>{"beta-net", "Alpha-net"}));
  page.offset = 7;
  EXPECT_TRUE(Names(page).empty());
  InTransaction(db_, [&](pqxx::work& tx) { EXPECT_EQ(ListModels(tx, page).total, 3); });
  InTransaction(db_, [](pqxx::work& tx) {
    EXPECT_EQ(ListModelLabels(tx), (std::vector<std::string>{"vision", "prod", "text"}));
  });
}

TEST_F(ModelsRepoTest, VersionsAreNumberedFromOnePerModelAndChangedAndDeletedByNumber) {
  const int64_t first = AddModel("first");
  const int64_t second = AddModel("second");
  EXPECT_EQ(Register(first, kModelUuidA).version, 1);
  EXPECT_EQ(Register(first, kModelUuidB).version, 2);
  EXPECT_EQ(Register(second, kModelUuidA).version, 1);
  InTransaction(db_, [&](pqxx::work& tx) {
    EXPECT_EQ(FindModel(tx, "first")->num_versions, 2);
    auto newest_first = ListModelVersions(tx, first, /*by_created=*/false, /*descending=*/true);
    ASSERT_EQ(newest_first.size(), 2u);
    EXPECT_EQ(newest_first[0].version, 2);
    EXPECT_EQ(newest_first[0].checkpoint_uuid, kModelUuidB);
    auto second_page = ListModelVersions(tx, first, false, true, /*start=*/1, /*limit=*/1);
    ASSERT_EQ(second_page.size(), 1u) << "a page read by PostgreSQL";
    EXPECT_EQ(second_page[0].version, 1);
    ModelVersionChange change;
    change.notes = "ship it";
    change.labels_json = R"(["best"])";
    ASSERT_TRUE(UpdateModelVersion(tx, first, 1, change).ok());
    auto changed = FindModelVersion(tx, first, 1);
    ASSERT_TRUE(changed.ok());
    EXPECT_EQ(changed->notes, "ship it");
    EXPECT_EQ(changed->labels_json, R"(["best"])");
    EXPECT_EQ(UpdateModelVersion(tx, first, 9, change).code(), StatusCode::kNotFound);
    ASSERT_TRUE(DeleteModelVersion(tx, first, 1).ok());
    EXPECT_EQ(FindModelVersion(tx, first, 1).status().code(), StatusCode::kNotFound);
    // A deleted number is not taken again: the next is the highest plus one.
  });
  EXPECT_EQ(Register(first, kModelUuidA).version, 3);
  InTransaction(db_, [&](pqxx::work& tx) {
    ASSERT_TRUE(DeleteModel(tx, second).ok());
    EXPECT_EQ(ListModelVersions(tx, second, false, false).size(), 0u);
    EXPECT_EQ(DeleteModel(tx, second).code(), StatusCode::kNotFound);
  });
}

// A registered checkpoint leaves GC's and deletion's choice (ListScoredCheckpoints), and what the
// version keeps of it outlives the experiment's rows.
TEST_F(ModelsRepoTest, ARegisteredCheckpointOutlivesItsExperimentsDeletion) {
  const auto [experiment, trial] = ExperimentWithTwoCheckpoints();
  InTransaction(db_, [&](pqxx::work& tx) {
    EXPECT_EQ(ListScoredCheckpoints(tx, experiment, "").size(), 2u);
  });
  Register(AddModel("kept"), kModelUuidA);
  InTransaction(db_, [&](pqxx::work& tx) {
    auto collectable = ListScoredCheckpoints(tx, experiment, "");
    ASSERT_EQ(collectable.size(), 1u);
    EXPECT_EQ(collectable[0].uuid, kModelUuidB);
    EXPECT_EQ(RegisteredAmong(tx, {kModelUuidA, kModelUuidB}),
              (std::vector<std::string>{kModelUuidA}));
    ASSERT_TRUE(DeleteExperiment(tx, experiment).ok());
    EXPECT_FALSE(FindCheckpoint(tx, kModelUuidA).has_value());
    auto kept = FindRegisteredCheckpoint(tx, kModelUuidA);
    ASSERT_TRUE(kept.has_value());
    EXPECT_NE(kept->checkpoint_json.find(kModelUuidA), std::string::npos);
    EXPECT_NE(kept->storage_json.find("shared_fs"), std::string::npos);
    EXPECT_FALSE(FindRegisteredCheckpoint(tx, kModelUuidB).has_value());
  });
}

// Registration and removal exclude each other: a checkpoint registered before GC claims it is
// kept; one claimed first is refused registration until a failed removal gives the claim back;
// a deleted one is never registered. (Each side locks the checkpoint's row first: the second of
// two concurrent transactions waits for the first and sees what it did.)
TEST_F(ModelsRepoTest, ACheckpointIsRegisteredOrRemovedNeverBoth) {
  const auto [experiment, trial] = ExperimentWithTwoCheckpoints();
  const int64_t model = AddModel("race");
  InTransaction(db_, [&](pqxx::work& tx) {
    EXPECT_TRUE(LockForRegistration(tx, kModelUuidA).ok());
    return 0;
  });
  Register(model, kModelUuidA);  // registered before GC chose to claim it
  InTransaction(db_, [&](pqxx::work& tx) {
    EXPECT_EQ(ClaimForRemoval(tx, {kModelUuidA, kModelUuidB}),
              (std::vector<std::string>{kModelUuidB}))
        << "the registered one is kept";
    const Status refused = LockForRegistration(tx, kModelUuidB);
    EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.message().find("being removed"), std::string::npos) << refused.message();
    ReleaseRemovalClaim(tx, {kModelUuidB});  // its removal failed
    EXPECT_TRUE(LockForRegistration(tx, kModelUuidB).ok());
    EXPECT_EQ(ClaimForRemoval(tx, {kModelUuidB}), (std::vector<std::string>{kModelUuidB}));
    EXPECT_TRUE(SetCheckpointState(tx, kModelUuidB, "DELETED").ok());
    ReleaseRemovalClaim(tx, {kModelUuidB});
    EXPECT_EQ(LockForRegistration(tx, kModelUuidB).code(), StatusCode::kFailedPrecondition)
        << "its files are gone";
    EXPECT_EQ(LockForRegistration(tx, "00000000-0000-4000-8000-000000000000").code(),
              StatusCode::kNotFound);
    EXPECT_TRUE(SaveCheckpoint(tx, {kModelUuidC, trial, 300, "COMPLETED", R"({"w.pt": 10})"}).ok());
    return 0;
  });
  // Concurrently: a registration that comes while a claim's transaction is open waits for it,
  // then is refused.
  auto claiming = storage::Connect(db_);
  ASSERT_TRUE(claiming.ok());
  pqxx::work claim(**claiming);
  ASSERT_EQ(ClaimForRemoval(claim, {kModelUuidC}), (std::vector<std::string>{kModelUuidC}));
  std::promise<Status> registered;
  std::thread registration([&] {
    registered.set_value(
        InTransaction(db_, [&](pqxx::work& tx) { return LockForRegistration(tx, kModelUuidC); }));
  });
  auto outcome = registered.get_future();
  EXPECT_EQ(outcome.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the registration waits for the claim's transaction";
  claim.commit();
  EXPECT_EQ(outcome.get().code(), StatusCode::kFailedPrecondition);
  registration.join();
}

}  // namespace
}  // namespace det::storage
