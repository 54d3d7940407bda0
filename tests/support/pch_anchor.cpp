// The source kvframe_test_pch compiles its precompiled header with (tests/CMakeLists.txt).
