// A checkpoint's files read ahead on several readers: pieces come out in file order whatever
// order the reads end in, never more than `parallel` ahead of the consumer, an error where it
// happened (nothing after it), and a read-ahead dropped midway stops reading.
#include "master/experiments/checkpoint_read_ahead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

namespace det {
namespace {

using master::CheckpointFile;
using master::CheckpointFiles;
using master::CheckpointReadAhead;

// What the readers of one checkpoint share: its files, and what was done to them.
struct Shelf {
  std::map<std::string, std::string> files;
  std::atomic<int> opened{0};
  std::atomic<int> reads{0};
  std::atomic<int> handed_out{0};  // the test counts the pieces it took
  std::atomic<int> most_ahead{0};  // the most reads started beyond what was taken
  std::string failing_path;        // a read of it fails (Unavailable)
  uint64_t failing_offset = 0;
  // Set: the first read waits (up to 10 s) for a second one to start beside it.
  bool first_read_waits_for_company = false;
  std::mutex mutex;
  std::condition_variable changed;
  int reading = 0;       // reads under way
  int most_at_once = 0;  // the most reads under way together
};

class ShelfFiles : public CheckpointFiles {
 public:
  explicit ShelfFiles(Shelf& shelf) : shelf_(shelf) {}
  Result<std::vector<CheckpointFile>> List() override {
    std::vector<CheckpointFile> listed;
    for (const auto& [path, content] : shelf_.files) listed.push_back({path, content.size()});
    return listed;
  }
  Result<std::string> Read(const std::string& path, uint64_t offset, uint64_t length) override {
    const int ahead = ++shelf_.reads - shelf_.handed_out;
    for (int most = shelf_.most_ahead; ahead > most;) {
      if (shelf_.most_ahead.compare_exchange_weak(most, ahead)) break;
    }
    {
      std::unique_lock lock(shelf_.mutex);
      shelf_.most_at_once = std::max(shelf_.most_at_once, ++shelf_.reading);
      shelf_.changed.notify_all();
      if (shelf_.first_read_waits_for_company && path == "a.bin" && offset == 0) {
        // Until another reader has read beside this one: it may have finished again (and left
        // `reading`) before this thread woke, so the peak is what counts.
        shelf_.changed.wait_for(lock, std::chrono::seconds(10),
                                [&] { return shelf_.most_at_once > 1; });
      }
    }
    struct Done {
      Shelf& shelf;
      ~Done() {
        std::lock_guard lock(shelf.mutex);
        --shelf.reading;
      }
    } done{shelf_};
    if (path == shelf_.failing_path && offset == shelf_.failing_offset) {
      return Unavailable("the bucket answered 503 for " + path);
    }
    const std::string& content = shelf_.files.at(path);
    return offset >= content.size() ? "" : content.substr(offset, length);
  }
  std::string Where() const override { return "shelf"; }

 private:
  Shelf& shelf_;
};

CheckpointReadAhead::OpenReader OpenOn(Shelf& shelf) {
  return [&shelf]() -> Result<std::unique_ptr<CheckpointFiles>> {
    ++shelf.opened;
    return std::unique_ptr<CheckpointFiles>(std::make_unique<ShelfFiles>(shelf));
  };
}

std::vector<CheckpointFile> Listed(Shelf& shelf) { return *ShelfFiles(shelf).List(); }

std::string Text(size_t size, char first) {
  std::string text(size, '\0');
  for (size_t i = 0; i < size; ++i) text[i] = static_cast<char>(first + i % 23);
  return text;
}

// Every piece until the end or an error: the files put back together, and the error.
struct Taken {
  std::map<std::string, std::string> files;
  Status error = Status::Ok();
  int pieces = 0;
};

Taken TakeAll(CheckpointReadAhead& ahead, Shelf& shelf, const std::vector<CheckpointFile>& files) {
  Taken taken;
  for (;;) {
    Result<CheckpointReadAhead::Piece> piece = ahead.Next();
    if (!piece.ok()) {
      if (piece.status().code() != StatusCode::kFailedPrecondition) taken.error = piece.status();
      return taken;
    }
    ++shelf.handed_out;
    ++taken.pieces;
    std::string& file = taken.files[files[piece->file].path];
    EXPECT_EQ(piece->offset, file.size()) << "pieces of a file come in order";
    file += piece->bytes;
    ahead.Recycle(std::move(piece->bytes));
  }
}

TEST(CheckpointReadAheadTest, PiecesComeInFileOrderFromSeveralReadersNeverFarAhead) {
  Shelf shelf;
  shelf.files = {{"a.bin", Text(10 * 1000 + 7, 'a')},
                 {"b/empty", ""},
                 {"c.txt", Text(999, 'c')},
                 {"d.bin", Text(4 * 1000, 'd')}};
  shelf.first_read_waits_for_company = true;
  const auto files = Listed(shelf);
  auto ahead = std::make_unique<CheckpointReadAhead>(OpenOn(shelf), files,
                                                     CheckpointReadAhead::Options{1000, 3});
  const Taken taken = TakeAll(*ahead, shelf, files);
  ASSERT_TRUE(taken.error.ok()) << taken.error.ToString();
  EXPECT_FALSE(ahead->Next().ok()) << "nothing after the end";
  ahead.reset();  // its threads joined
  std::map<std::string, std::string> expected = shelf.files;
  expected.erase("b/empty");  // a file of 0 bytes has no piece
  EXPECT_TRUE(taken.files == expected);
  EXPECT_EQ(taken.pieces, 11 + 1 + 4);
  EXPECT_EQ(shelf.reads, taken.pieces) << "each piece read once";
  EXPECT_EQ(shelf.opened, 3) << "a reader per reading thread";
  // (+1: the piece being handed over, which the test counts once Next() returned)
  EXPECT_LE(shelf.most_ahead, 3 + 1) << "never more than `parallel` pieces ahead of the consumer";
  EXPECT_GE(shelf.most_at_once, 2) << "the readers read side by side";
}

TEST(CheckpointReadAheadTest, AFailedReadComesOutWhereItHappenedAndNothingAfterIt) {
  Shelf shelf;
  shelf.files = {{"a.bin", Text(5000, 'a')}, {"b.bin", Text(5000, 'b')}};
  shelf.failing_path = "b.bin";
  shelf.failing_offset = 2000;
  const auto files = Listed(shelf);
  CheckpointReadAhead ahead(OpenOn(shelf), files, {1000, 4});
  const Taken taken = TakeAll(ahead, shelf, files);
  EXPECT_EQ(taken.error.code(), StatusCode::kUnavailable);
  EXPECT_NE(taken.error.message().find("b.bin"), std::string::npos) << taken.error.ToString();
  EXPECT_EQ(taken.pieces, 5 + 2) << "every piece before the failed one, none after";
  EXPECT_EQ(ahead.Next().status().code(), StatusCode::kFailedPrecondition);
}

TEST(CheckpointReadAheadTest, AReaderThatCannotBeOpenedFailsTheDownload) {
  Shelf shelf;
  shelf.files = {{"a.bin", Text(3000, 'a')}};
  const auto files = Listed(shelf);
  CheckpointReadAhead ahead(
      [] { return Result<std::unique_ptr<CheckpointFiles>>(Unavailable("no such bucket")); }, files,
      {1000, 2});
  const Taken taken = TakeAll(ahead, shelf, files);
  EXPECT_EQ(taken.error.message(), "no such bucket");
  EXPECT_EQ(taken.pieces, 0);
}

TEST(CheckpointReadAheadTest, DroppedMidwayItStopsReading) {
  Shelf shelf;
  shelf.files = {{"big.bin", Text(1000 * 1000, 'x')}};
  const auto files = Listed(shelf);
  {
    CheckpointReadAhead ahead(OpenOn(shelf), files, {1000, 4});
    ASSERT_TRUE(ahead.Next().ok());
    ++shelf.handed_out;
  }  // the client went away: the destructor stops the readers and waits for them
  EXPECT_LE(shelf.reads, 1 + 4) << "of 1000 pieces, only those within reach were read";
}

TEST(CheckpointReadAheadTest, NothingToReadStartsNoReader) {
  Shelf shelf;
  shelf.files = {{"empty", ""}};
  const auto files = Listed(shelf);
  CheckpointReadAhead ahead(OpenOn(shelf), files, {1000, 4});
  EXPECT_EQ(ahead.Next().status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(shelf.opened, 0);
}

}  // namespace
}  // namespace det
