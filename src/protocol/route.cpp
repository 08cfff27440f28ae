#include "protocol/route.hpp"

#include "core/config.hpp"

namespace gddt::protocol {

bool Choice::small() const {
  return message.bytes() < static_cast<std::int64_t>(config::settings().device_staging_min);
}

Route device_route_forced() {
  static const Route forced = [] {
    switch (config::protocol()) {
      case config::Protocol::kHost: return Route::kHostStaged;
      case config::Protocol::kDevice: return Route::kDeviceStaged;
      case config::Protocol::kAuto: break;
    }
    return Route::kForward;
  }();
  return forced;
}

bool host_through_gddt() {
  static const bool through = config::p2p_host() == config::P2pHost::kGddt;
  return through;
}

}  // namespace gddt::protocol
