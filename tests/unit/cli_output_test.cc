#include <gtest/gtest.h>

#include "cli/completion.h"
#include "cli/master_url.h"
#include "cli/output.h"

namespace det::cli {
namespace {

using nlohmann::ordered_json;

TEST(CsvTest, AnArrayOfObjectsIsAHeaderAndARowEach) {
  const ordered_json rows = ordered_json::parse(
      R"([{"id":1,"name":"a, b","tags":["x"]},{"id":2,"note":"say \"hi\"\nbye","name":null}])");
  EXPECT_EQ(ToCsv(rows),
            "id,name,tags,note\n"
            "1,\"a, b\",\"[\"\"x\"\"]\",\n"
            "2,,,\"say \"\"hi\"\"\nbye\"\n");
}

TEST(CsvTest, OneObjectIsOneRowAndScalarsAreThemselves) {
  EXPECT_EQ(ToCsv(ordered_json{{"task_id", "cmd-1"}}), "task_id\ncmd-1\n");
  EXPECT_EQ(ToCsv(ordered_json{{"task_id", "cmd-1"}}, /*header=*/false), "cmd-1\n");
  EXPECT_EQ(ToCsv(ordered_json::array({1, "two"})), "1\ntwo\n");
  EXPECT_EQ(ToCsv(ordered_json::array()), "");
}

TEST(CompletionTest, EveryCommandPathCompletesItsSubcommandsAndOptions) {
  CLI::App app;
  app.add_flag("--json");
  auto* agent = app.add_subcommand("agent");
  agent->add_subcommand("list");
  agent->add_subcommand("disable")->add_flag("--drain");
  const std::string script = BashCompletion(app);
  EXPECT_NE(script.find(R"("") words="agent --help -h --json ")"), std::string::npos) << script;
  EXPECT_NE(script.find(R"(" agent") words="list disable --help -h ")"), std::string::npos);
  EXPECT_NE(script.find(R"(" agent disable") words="--help -h --drain ")"), std::string::npos);
  EXPECT_NE(script.find(R"(" agent"|" agent disable"|" agent list") path=)"), std::string::npos);
  EXPECT_NE(script.find("complete -F _det det"), std::string::npos);
}

// det -m http(s)://... reads the gateway's port from GET /api/v1/master's body.
TEST(MasterUrlTest, TheGatewayPortComesFromTheMastersInfo) {
  EXPECT_TRUE(IsMasterUrl("http://10.0.0.5:8080"));
  EXPECT_TRUE(IsMasterUrl("https://master.example.com"));
  EXPECT_FALSE(IsMasterUrl("10.0.0.5:8090"));
  EXPECT_FALSE(IsMasterUrl("tcp://10.0.0.5:8090"));
  EXPECT_EQ(GatewayPortOfMasterInfo(R"({"version": "1", "gateway_port": 8090})").value_or(0), 8090);
  for (const char* body : {R"({"version": "1"})", R"({"gateway_port": "8090"})",
                           R"({"gateway_port": 70000})", "<html>", R"([8090])"}) {
    auto port = GatewayPortOfMasterInfo(body);
    ASSERT_FALSE(port.ok()) << body;
    EXPECT_NE(port.status().message().find("no gateway port"), std::string::npos);
  }
}

}  // namespace
}  // namespace det::cli
