// ProbeHostCopy: the bytes asked, a positive time, every thread count (more threads than
// bytes included), and clear errors for what cannot be measured.
#include "backend/measure/host_copy_probe.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace loadplan::backend {
namespace {

TEST(HostCopyProbe, MeasuresTheBytesAskedOnEveryThreadCount) {
  for (const uint32_t threads : {1u, 2u, 3u, 16u}) {
    const base::Result<Throughput> r = ProbeHostCopy(uint64_t{8} << 20, threads, 2);
    ASSERT_TRUE(r.ok()) << threads << ": " << r.status().message();
    EXPECT_EQ(r->bytes, uint64_t{8} << 20);
    EXPECT_GT(r->seconds, 0);
    EXPECT_GT(r->gbps(), 0);
  }
}

TEST(HostCopyProbe, MoreThreadsThanBytesStillCopiesEveryByte) {
  const base::Result<Throughput> r = ProbeHostCopy(5, 16, 1);  // 5 threads get a byte, 11 none
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->bytes, 5u);
}

TEST(HostCopyProbe, ZeroBytesOrThreadsIsAnInvalidInputError) {
  for (const auto& [bytes, threads] : {std::pair<uint64_t, uint32_t>{0, 4}, {4096, 0}}) {
    const base::Result<Throughput> r = ProbeHostCopy(bytes, threads);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().kind(), base::ErrorKind::kInvalidInput);
    EXPECT_NE(r.status().message().find("must be positive"), std::string::npos)
        << r.status().message();
  }
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan =
    true;  // ASan aborts a 2^60-byte new(nothrow) unless allocator_may_return_null
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

TEST(HostCopyProbe, AnImpossibleAllocationIsOutOfMemoryNamingTheBytes) {
  if (kAsan) GTEST_SKIP() << "ASan reports the allocation instead of returning null";
  const uint64_t huge = uint64_t{1} << 60;
  const base::Result<Throughput> r = ProbeHostCopy(huge, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), base::ErrorKind::kOutOfMemory);
  EXPECT_NE(r.status().message().find(std::to_string(huge)), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace loadplan::backend
