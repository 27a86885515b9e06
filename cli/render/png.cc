// SVG -> PNG with librsvg and cairo, both reached through one dlopen of librsvg-2.so.2 (its
// dependencies bring cairo and gobject; dlsym on the handle searches them too).
#include "cli/render/png.h"

#include <dlfcn.h>

#include <cmath>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <librsvg/rsvg.h>

namespace loadplan::render {
namespace {

constexpr std::string_view kLibrary = "librsvg-2.so.2";
constexpr double kMaxSide = 16384;

// The librsvg, cairo and gobject entry points PNG output uses.
struct Rsvg {
  decltype(&rsvg_handle_new_from_data) new_from_data = nullptr;
  decltype(&rsvg_handle_get_intrinsic_size_in_pixels) intrinsic_size = nullptr;
  decltype(&rsvg_handle_render_document) render_document = nullptr;
  decltype(&cairo_image_surface_create) surface_create = nullptr;
  decltype(&cairo_surface_status) surface_status = nullptr;
  decltype(&cairo_surface_destroy) surface_destroy = nullptr;
  decltype(&cairo_surface_write_to_png_stream) write_png = nullptr;
  decltype(&cairo_create) create = nullptr;
  decltype(&cairo_scale) scale = nullptr;
  decltype(&cairo_destroy) destroy = nullptr;
  decltype(&g_object_unref) unref = nullptr;
  decltype(&g_error_free) error_free = nullptr;
  std::string error;  // why it could not be loaded
};

template <class F>
bool Resolve(void* handle, const char* name, F& f, std::string& error) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  if (f == nullptr && error.empty()) error = fmt::format("{} has no symbol {}", kLibrary, name);
  return f != nullptr;
}

Rsvg Load() {
  Rsvg r;
  // Never closed: gobject's type system cannot be unloaded.
  void* h = dlopen(std::string(kLibrary).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    r.error = fmt::format(
        "PNG output needs librsvg ({}: {}); on Debian: apt-get install "
        "librsvg2-2, or write .svg",
        kLibrary, dlerror());
    return r;
  }
  bool ok = Resolve(h, "rsvg_handle_new_from_data", r.new_from_data, r.error);
  ok &= Resolve(h, "rsvg_handle_get_intrinsic_size_in_pixels", r.intrinsic_size, r.error);
  ok &= Resolve(h, "rsvg_handle_render_document", r.render_document, r.error);
  ok &= Resolve(h, "cairo_image_surface_create", r.surface_create, r.error);
  ok &= Resolve(h, "cairo_surface_status", r.surface_status, r.error);
  ok &= Resolve(h, "cairo_surface_destroy", r.surface_destroy, r.error);
  ok &= Resolve(h, "cairo_surface_write_to_png_stream", r.write_png, r.error);
  ok &= Resolve(h, "cairo_create", r.create, r.error);
  ok &= Resolve(h, "cairo_scale", r.scale, r.error);
  ok &= Resolve(h, "cairo_destroy", r.destroy, r.error);
  ok &= Resolve(h, "g_object_unref", r.unref, r.error);
  ok &= Resolve(h, "g_error_free", r.error_free, r.error);
  if (!ok) r.error = "PNG output: " + r.error + " (librsvg 2.52 or later is needed)";
  return r;
}

const Rsvg& Library() {
  static const Rsvg r = Load();
  return r;
}

base::Status Failed(const Rsvg& r, GError* error, std::string_view what) {
  std::string message = fmt::format("PNG output: {}", what);
  if (error != nullptr) {
    message += fmt::format(": {}", error->message);
    r.error_free(error);
  }
  return base::Status::Error(message, base::ErrorKind::kIo);
}

cairo_status_t AppendBytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// Renders a parsed handle onto a new surface of its size x scale, then encodes it.
base::Result<std::string> Rasterise(const Rsvg& r, RsvgHandle* handle, double scale) {
  double w = 0, h = 0;
  if (!r.intrinsic_size(handle, &w, &h) || !(w > 0) || !(h > 0))
    return Failed(r, nullptr, "the SVG has no width and height in pixels");
  const double pw = std::ceil(w * scale), ph = std::ceil(h * scale);
  if (!(pw <= kMaxSide && ph <= kMaxSide))
    return Failed(r, nullptr,
                  fmt::format("{:.0f} x {:.0f} pixels: more than {:.0f} a side", pw, ph, kMaxSide));
  auto surface = std::unique_ptr<cairo_surface_t, decltype(r.surface_destroy)>(
      r.surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(pw), static_cast<int>(ph)),
      r.surface_destroy);
  if (r.surface_status(surface.get()) != CAIRO_STATUS_SUCCESS)
    return Failed(r, nullptr, "cairo cannot create the image surface");
  auto cr = std::unique_ptr<cairo_t, decltype(r.destroy)>(r.create(surface.get()), r.destroy);
  r.scale(cr.get(), scale, scale);
  const RsvgRectangle viewport{0, 0, w, h};
  GError* error = nullptr;
  if (!r.render_document(handle, cr.get(), &viewport, &error))
    return Failed(r, error, "librsvg cannot render the SVG");
  std::string png;
  if (r.write_png(surface.get(), &AppendBytes, &png) != CAIRO_STATUS_SUCCESS)
    return Failed(r, nullptr, "cairo cannot encode the PNG");
  return png;
}

}  // namespace

base::Result<std::string> SvgToPng(std::string_view svg, double scale) {
  static std::mutex mutex;  // librsvg handles are not to be shared; one conversion at a time
  std::lock_guard lock(mutex);
  const Rsvg& r = Library();
  if (!r.error.empty()) return base::Status::Error(r.error, base::ErrorKind::kIo);
  if (!(scale > 0 && scale <= 8)) return Failed(r, nullptr, "the scale must be in (0, 8]");
  GError* error = nullptr;
  RsvgHandle* handle =
      r.new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error);
  if (handle == nullptr) return Failed(r, error, "librsvg cannot parse the SVG");
  base::Result<std::string> png = Rasterise(r, handle, scale);
  r.unref(handle);
  return png;
}

}  // namespace loadplan::render
