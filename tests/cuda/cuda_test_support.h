// Shared by the CUDA tests: one CUDA backend for the whole test binary (or the reason there is none,
// which every test reports as its skip message), and a fixture that skips cleanly without a GPU.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/backend/backend.h"
#include "engine/backend/cuda/cuda_factory.h"
#include "engine/core/errors.h"

namespace normlab::testing {

// The process's CUDA backend, made on first use; null, with `reason` set, when no GPU answers.
inline Backend* shared_cuda_backend(std::string* reason) {
    static std::string why;
    // Never destroyed: at exit the CUDA runtime may already be shut down when static destructors run.
    static Backend* const backend = []() -> Backend* {
        try {
            return make_cuda_backend().release();
        } catch (const ResourceError& error) {
            why = error.what();
            return nullptr;
        }
    }();
    if (reason) *reason = why;
    return backend;
}

// Skips the test (GTEST_SKIP, reported as SKIPPED by ctest) when no CUDA GPU answers.
class CudaTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string reason;
        m_cuda = shared_cuda_backend(&reason);
        if (!m_cuda) GTEST_SKIP() << "no CUDA GPU: " << reason;
    }
    Backend& cuda() { return *m_cuda; }

  private:
    Backend* m_cuda = nullptr;
};

template <class Param>
class CudaTestWithParam : public CudaTest, public ::testing::WithParamInterface<Param> {};

}  // namespace normlab::testing
