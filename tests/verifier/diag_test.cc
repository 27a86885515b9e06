// Diagnostics: pointer helpers and ordering, the sink, text and JSON formats, did-you-mean.
#include "verifier/diag.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace loadplan::verifier {
namespace {

TEST(Diag, EscapesPointerTokens) {
  EXPECT_EQ(EscapePointerToken("a/b~c"), "a~1b~0c");
  EXPECT_EQ(EscapePointerToken("~1"), "~01");
  EXPECT_EQ(ChildPointer("/buffers", "a/b"), "/buffers/a~1b");
  EXPECT_EQ(ChildPointer("", "x"), "/x");
  EXPECT_EQ(ChildPointer("/programs/p/calls", size_t{12}), "/programs/p/calls/12");
}

TEST(Diag, PointerLessComparesIndicesAsNumbers) {
  EXPECT_TRUE(PointerLess("/calls/2", "/calls/10"));
  EXPECT_FALSE(PointerLess("/calls/10", "/calls/2"));
  EXPECT_TRUE(PointerLess("/calls/9/args/x", "/calls/10"));
  EXPECT_TRUE(PointerLess("", "/a"));
  EXPECT_TRUE(PointerLess("/a", "/a/b"));
  EXPECT_FALSE(PointerLess("/a/b", "/a"));
  EXPECT_FALSE(PointerLess("/a", "/a"));
  EXPECT_TRUE(PointerLess("/b/a", "/b/b"));
  EXPECT_TRUE(PointerLess("/buffers/a", "/kernels"));
  // Tokens compare unescaped, so pointers sort like the names they hold.
  EXPECT_TRUE(PointerLess("/b/a~1", "/b/a0"));                                      // "a/" < "a0"
  EXPECT_TRUE(PointerLess("/x/99999999999999999999", "/x/100000000000000000000"));  // no overflow
}

TEST(Diag, SinkCountsAndSorts) {
  DiagSink sink;
  EXPECT_FALSE(sink.HasErrors());
  sink.Warning("L1", "/buffers/w", "lint");
  EXPECT_FALSE(sink.HasErrors());
  sink.Error("P5", "/programs/p/calls/10", "b");
  sink.Error("S10", "/programs/p/calls/2", "a");
  sink.Error("S2", "/programs/p/calls/2", "a");
  sink.Error("P4", "", "root");
  EXPECT_TRUE(sink.HasErrors());
  EXPECT_EQ(sink.ErrorCount(), 4u);
  std::vector<std::string> order;
  for (const Diagnostic& d : sink.Sorted()) order.push_back(d.code + " " + d.pointer);
  EXPECT_EQ(order,
            (std::vector<std::string>{"P4 ", "L1 /buffers/w", "S2 /programs/p/calls/2",
                                      "S10 /programs/p/calls/2", "P5 /programs/p/calls/10"}));
  EXPECT_EQ(sink.All().size(), 5u);
  EXPECT_EQ(sink.All()[0].code, "L1");  // All() keeps report order
}

std::vector<Diagnostic> Sample() {
  return {
      {.severity = Severity::kError,
       .code = "P4",
       .pointer = "/programs/x/calls/2",
       .message = "depends on batch",
       .hint = "make it constant",
       .notes = {{.pointer = "/vars/batch", .message = "declared here"}}},
      {.severity = Severity::kWarning,
       .code = "L1",
       .pointer = "",
       .message = "root",
       .hint = "",
       .notes = {}},
  };
}

TEST(Diag, FormatText) {
  EXPECT_EQ(FormatText(Sample(), "m.json"),
            "m.json: error[P4] /programs/x/calls/2: depends on batch\n"
            "  hint: make it constant\n"
            "  note: /vars/batch: declared here\n"
            "m.json: warning[L1] /: root\n");
  EXPECT_EQ(FormatText({}, "m.json"), "");
  // A control character in a name is shown escaped, not raw.
  std::vector<Diagnostic> ctl = {{.code = "S5", .pointer = "/buffers/d\x01", .message = "m"}};
  EXPECT_EQ(FormatText(ctl, "f"), "f: error[S5] /buffers/d\\u0001: m\n");
}

TEST(Diag, FormatJson) {
  nlohmann::json j = nlohmann::json::parse(FormatJson(Sample(), "m.json"));
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["severity"], "error");
  EXPECT_EQ(j[0]["code"], "P4");
  EXPECT_EQ(j[0]["file"], "m.json");
  EXPECT_EQ(j[0]["pointer"], "/programs/x/calls/2");
  EXPECT_EQ(j[0]["hint"], "make it constant");
  EXPECT_EQ(j[0]["notes"][0]["pointer"], "/vars/batch");
  EXPECT_EQ(j[0]["notes"][0]["message"], "declared here");
  EXPECT_EQ(j[1]["severity"], "warning");
  EXPECT_EQ(j[1]["pointer"], "");
  EXPECT_TRUE(j[1]["notes"].empty());
  // Invalid UTF-8 in a message must not throw.
  std::vector<Diagnostic> bad = {{.code = "S5", .pointer = "/x", .message = "bad \xff byte"}};
  EXPECT_NO_THROW(nlohmann::json::parse(FormatJson(bad, "m.json")));
}

TEST(Diag, DidYouMean) {
  const std::vector<std::string> keys = {"dtype",  "kind", "shape",   "tensor",
                                         "export", "lane", "encoding"};
  EXPECT_EQ(DidYouMean("dtpye", keys), "dtype");  // transposition
  EXPECT_EQ(DidYouMean("shap", keys), "shape");
  EXPECT_EQ(DidYouMean("tensors", keys), "tensor");
  EXPECT_EQ(DidYouMean("zzzzzz", keys), "");
  EXPECT_EQ(DidYouMean("encodingg", keys), "encoding");
  EXPECT_EQ(DidYouMean("bf16", {"BF16", "F16", "F32"}), "BF16");  // case folded
  EXPECT_EQ(DidYouMean("x", {}), "");
  EXPECT_EQ(DidYouMean(std::string(10000, 'a'), keys), "");
}

}  // namespace
}  // namespace loadplan::verifier
