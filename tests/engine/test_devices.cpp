// Device listing and selection as this build and machine allow: the CPU is always listed first and
// available; CUDA is always listed, with a reason when unavailable; without a GPU, device=cuda is a
// ResourceError carrying that reason and device=auto trains on the CPU and says why.
#include <gtest/gtest.h>

#include "engine/backend/backend.h"
#include "engine/backend/devices.h"
#include "engine/core/errors.h"

namespace normlab {
namespace {

TEST(Devices, CpuFirstAndAvailableCudaListedWithAReason) {
    const auto devices = list_devices();
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0].id, "cpu");
    EXPECT_TRUE(devices[0].available);
    EXPECT_EQ(devices[0].label.rfind("CPU (", 0), 0u) << devices[0].label;
    EXPECT_EQ(devices[1].id, "cuda");
    EXPECT_FALSE(devices[1].label.empty());
    if (devices[1].available) {
        EXPECT_TRUE(devices[1].reason.empty()) << devices[1].reason;
    } else {
        EXPECT_FALSE(devices[1].reason.empty());
    }
}

TEST(Devices, WithoutAGpuCudaIsAResourceErrorAndAutoTakesTheCpu) {
    const DeviceInfo cuda = list_devices()[1];
    if (cuda.available) GTEST_SKIP() << "a CUDA GPU answered (" << cuda.label << "); tests/cuda covers it";
    try {
        make_backend("cuda", 1, nullptr);
        FAIL() << "device=cuda without a GPU should throw";
    } catch (const ResourceError& error) {
        const std::string message = error.what();
        EXPECT_EQ(message.rfind("device=cuda was asked for, but ", 0), 0u) << message;
        EXPECT_NE(message.find("use device=cpu or device=auto"), std::string::npos) << message;
#ifdef NORMLAB_HAVE_CUDA
        // the runtime's own words, as list_devices reports them
        EXPECT_NE(message.find(cuda.reason), std::string::npos) << message << " vs " << cuda.reason;
#endif
    }
    std::string reason;
    const auto backend = make_backend("auto", 1, &reason);
    EXPECT_EQ(backend->device(), "cpu");
    EXPECT_EQ(reason.rfind("cpu: ", 0), 0u) << reason;
    EXPECT_NE(reason.find("CUDA"), std::string::npos) << reason;
}

TEST(Devices, CpuAskedForAndUnknownDevices) {
    std::string reason;
    EXPECT_EQ(make_backend("cpu", 1, &reason)->device(), "cpu");
    EXPECT_EQ(reason, "cpu: asked for");
    EXPECT_THROW(make_backend("gpu", 1, &reason), InputError);
}

}  // namespace
}  // namespace normlab
