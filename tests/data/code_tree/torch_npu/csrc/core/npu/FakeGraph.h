#pragma once
#include <string>

namespace c10_npu {

class TORCH_NPU_API FakeGraph : public GraphBase {
 public:
  explicit FakeGraph(int device);
  int id() const { return id_; }
  void capture_begin(MempoolId_t pool = {0, 0}, int mode = 0);
  void replay();
  void reset();

 private:
  struct Inner {
    int value() { return 1; }
  };
  int id_ = 0;
};

template <typename T>
class Holder {
 public:
  T get() const;

 private:
  T value_{};
};

} // namespace c10_npu
