// A small torch_npu-like C++ file for the scanner tests. A comment with braces: { }
#include "FakeGraph.h"
#include <string>

#define FAKE_CHECK_ERROR(err) \
  TORCH_CHECK(err == 0, "fake function error: ", #err, ", error code is ", err)

namespace c10_npu {
namespace detail {

/* A block comment with a closing brace } and an opening one {. */
void checkNotExternal(const FakeStream& stream, const char* api_name) {
  TORCH_CHECK(
      !stream.external(),
      "External stream is not supported in ",
      api_name,
      ". This path requires a torch_npu-managed stream.",
      PTA_ERROR(ErrCode::NOT_SUPPORT));
}

} // namespace detail

template <typename T>
T Holder<T>::get() const {
  return value_;
}

FakeGraph::FakeGraph(int device)
    : device_(device), pool_{0, 0}, name_("graph {") {
  const char* tricky = "}\" { '";
  char brace = '{';
  auto raw = R"delim(raw { not a block )" )delim";
}

void FakeGraph::capture_begin(MempoolId_t pool, int mode) {
  TORCH_CHECK(
      stream != getDefaultStream(),
      "Fake graphs must be captured on a non-default stream. "
      "(However, after capture, it's ok to replay them on the "
      "default stream.)");
  detail::checkNotExternal(stream, "FakeGraph::capture_begin");
  NPU_CHECK_ERROR(c10_npu::acl::AclmdlRICaptureBegin(capture_stream_, mode));
  TORCH_INTERNAL_ASSERT(status == CaptureStatus::Active);
  NPUGRAPH_LOGD("FAKEGRAPH Capture begin done: model=%p, device=%d", model_, device_);
}

#if defined(USE_NEW_API)
void FakeGraph::replay(int stream_id) {
#else
void FakeGraph::replay() {
#endif
  TORCH_CHECK(has_graph_, "Called FakeGraph::replay without a preceding successful capture.");
  std::string msg = "Replay failed on device ";
  msg += std::to_string(device_);
  msg += ", see the log above";
  TORCH_CHECK(ok(), msg);
}

bool FakeGraph::operator==(const FakeGraph& other) const {
  return id_ == other.id_;
}

std::ostream& operator<<(std::ostream& os, const FakeGraph& g) {
  os << "FakeGraph(" << g.id() << ")";
  return os;
}

void FakeGraph::reset() {
  if (bad_) {
    throw std::runtime_error("FakeGraph reset failed: " + reason_ + " (code " + std::to_string(code_) + ")");
  }
  TORCH_NPU_WARN("FakeGraph reset while capturing on device ", device_, "; the capture is discarded");
  auto alive = [this]() { return device_ > 0; };
  FAKE_CHECK_ERROR(code_);
}

} // namespace c10_npu

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {
  m.impl("fake_op", TORCH_FN(fake_op));
}
