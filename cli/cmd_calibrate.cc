// `loadplan calibrate`: Calibrate (backend/cuda/calibrate.h), progress on stderr, the profile out.
#include "cli/cmd_calibrate.h"

#include <cstdio>
#include <fstream>

#include "backend/measure/calibrate.h"
#include "cli/json_out.h"

namespace loadplan::cli {

int RunCalibrate(const CalibrateCliOptions& o) {
  backend::CalibrateOptions c{
      .device = o.device,
      .dir = o.dir,
      .scratch_bytes = static_cast<uint64_t>(o.scratch_gib * 1073741824.0),
      .io_threads = o.io_threads,
      .chunk_bytes = static_cast<uint64_t>(o.chunk_mib * 1048576.0),
      .choose_io = o.choose_io,
      .note = [](const std::string& s) { std::fprintf(stderr, "calibrate: %s\n", s.c_str()); }};
  c.cold_bytes = std::min(c.cold_bytes, c.scratch_bytes);
  base::Result<simulator::timing::MachineProfile> p = backend::Calibrate(c);
  if (!p.ok()) {
    std::fprintf(stderr, "loadplan calibrate: %s\n", p.status().message().c_str());
    const base::ErrorKind k = p.status().kind();
    return k == base::ErrorKind::kIo || k == base::ErrorKind::kInvalidInput ? 2 : 3;
  }
  const std::string text = DumpJson(simulator::timing::ProfileJson(*p)) + "\n";
  if (o.out.empty() || o.out == "-") {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream f(o.out, std::ios::binary);
  f << text;
  if (!f.flush()) {
    std::fprintf(stderr, "loadplan calibrate: cannot write %s\n", o.out.c_str());
    return 2;
  }
  std::fprintf(stderr, "calibrate: wrote %s\n", o.out.c_str());
  return 0;
}

}  // namespace loadplan::cli
