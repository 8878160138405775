// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Owned<T, destroy>: the destroy function runs once per owned object, never
// for null, and ownership moves.
#include <gtest/gtest.h>

#include <utility>

#include "xoffload/core/owned.hpp"

using namespace xoffload;

namespace {

struct Obj {
	int id;
};
int g_destroyed = 0;
int g_last = -1;
void obj_destroy(Obj *o)
{
	g_destroyed++;
	g_last = o->id;
}
int obj_close(Obj *o)	// a close returning a status (mnl_socket_close) works as well
{
	obj_destroy(o);
	return 0;
}

} // namespace

TEST(Owned, DestroysOnceNeverNullAndMoves)
{
	g_destroyed = 0;
	Obj a{1}, b{2};
	{
		Owned<Obj, obj_destroy> none;
		Owned<Obj, obj_destroy> x(&a);
		static_assert(sizeof(x) == sizeof(Obj *), "the deleter takes no room");
		Owned<Obj, obj_destroy> y(std::move(x));
		EXPECT_EQ(x, nullptr);
		EXPECT_EQ(g_destroyed, 0);
		y.reset(&b);
		EXPECT_EQ(g_destroyed, 1);
		EXPECT_EQ(g_last, 1);
	}
	EXPECT_EQ(g_destroyed, 2) << "b at scope end; the null one destroyed nothing";
	EXPECT_EQ(g_last, 2);
	{
		Owned<Obj, obj_close> z(&a);
	}
	EXPECT_EQ(g_destroyed, 3);
}
