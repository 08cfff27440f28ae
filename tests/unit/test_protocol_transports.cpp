// The transport table (protocol/transports.def): every route names exactly one row, rows fill what
// their kind of transport needs, and the last row serves every side, so that a side always finds
// the first row that serves it and keeps it.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "protocol/route.hpp"
#include "protocol/transport.hpp"

namespace gddt::protocol {
namespace {

std::vector<const Transport*> rows() {
  return {
#define GDDT_TRANSPORT(function) &function(),
#include "protocol/transports.def"
#undef GDDT_TRANSPORT
  };
}

constexpr Route kRoutes[] = {Route::kForward,  Route::kDeviceBytes, Route::kDeviceStaged, Route::kHostStaged,
                             Route::kHostSpan, Route::kPeerInline,  Route::kPeerIpc,      Route::kPeerStaged};

TEST(TransportTable, EveryRouteNamesOneRow) {
  for (Route route : kRoutes) {
    int named = 0;
    for (const Transport* row : rows()) named += row->route == route ? 1 : 0;
    EXPECT_EQ(named, 1) << "route " << static_cast<int>(route);
  }
  EXPECT_EQ(rows().size(), std::size(kRoutes));
}

TEST(TransportTable, NamesAreTheRowsOwnAndDistinct) {
  std::set<std::string> names;
  for (const Transport* row : rows()) {
    EXPECT_STREQ(route_name(row->route), row->name);
    EXPECT_TRUE(names.insert(row->name).second) << row->name;
  }
}

TEST(TransportTable, RowsFillWhatTheirKindNeeds) {
  for (const Transport* row : rows()) {
    SCOPED_TRACE(row->name);
    EXPECT_NE(row->serves, nullptr);
    EXPECT_NE(row->hand, nullptr);
    // The peer protocol's sends post their header before the library sends the marker.
    if (row->marker) {
      EXPECT_NE(row->fill, nullptr);
    }
    if (row->marker) {
      EXPECT_EQ(row->staging_bytes, nullptr);
    }
    // What gddt packs it unpacks, and what it stages it fills.
    if (row->packed) {
      EXPECT_NE(row->empty, nullptr);
    }
    if (row->staging_bytes != nullptr) {
      EXPECT_NE(row->fill, nullptr);
    }
    if (!row->marker) {
      EXPECT_NE(row->empty, nullptr);
    }
    // Only packed bytes can stay in device scratch.
    if (row->device_staging) {
      EXPECT_TRUE(row->packed);
    }
  }
}

TEST(TransportTable, TheLastRowServesEverySide) {
  const Transport& last = *rows().back();
  EXPECT_EQ(last.route, Route::kHostStaged);
  Message message;
  const Call call;
  const Choice choice{message, call, MPI_COMM_NULL, false, Route::kForward, false, {}};
  EXPECT_TRUE(last.serves(choice));
}

}  // namespace
}  // namespace gddt::protocol
