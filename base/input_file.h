// One way to open an input file, for every command and the Python package: a regular file,
// opened without blocking (a FIFO named as a manifest, config or shard never hangs us),
// checked before anything is read (a directory, a device such as /dev/zero, a file over its
// size limit: refused at once, with the path, the kind of file and the limit).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace loadplan::base {

// A descriptor of a regular file, O_RDONLY | O_CLOEXEC, blocking again once the type is
// checked. Errors (kIo): "cannot open x: No such file or directory", "cannot read x: a FIFO,
// not a regular file". The caller owns the descriptor.
[[nodiscard]] Result<int> OpenRegularFile(const std::string& path);

// The whole of a regular file of at most `limit` bytes; `what` names it in the messages
// ("x is 9000000 bytes, over the 8388608 byte config limit"). Errors: kIo (cannot open, not a
// regular file, a read error, over the limit: a file no command can take).
[[nodiscard]] Result<std::string> ReadInputFile(const std::string& path, uint64_t limit,
                                                std::string_view what);

}  // namespace loadplan::base
