// The pickle opcodes importers/pickle_reader knows, by the names CPython's pickletools gives them
// (https://docs.python.org/3/library/pickletools.html, Lib/pickletools.py), and how an error names one.
// Invariant: each constant is the opcode's byte in every protocol that has it.
#pragma once

#include <cstdint>
#include <string>

namespace strata::pickle_op {

// Protocols 0 and 1.
inline constexpr uint8_t kMark = '(', kStop = '.', kPop = '0', kPopMark = '1', kDup = '2';
inline constexpr uint8_t kFloat = 'F', kInt = 'I', kBinInt = 'J', kBinInt1 = 'K', kLong = 'L', kBinInt2 = 'M';
inline constexpr uint8_t kNone = 'N', kPersId = 'P', kBinPersId = 'Q', kReduce = 'R', kString = 'S';
inline constexpr uint8_t kBinString = 'T', kShortBinString = 'U', kUnicode = 'V', kBinUnicode = 'X';
inline constexpr uint8_t kAppend = 'a', kBuild = 'b', kGlobal = 'c', kDict = 'd', kEmptyDict = '}';
inline constexpr uint8_t kAppends = 'e', kGet = 'g', kBinGet = 'h', kInst = 'i', kLongBinGet = 'j';
inline constexpr uint8_t kList = 'l', kEmptyList = ']', kObj = 'o', kPut = 'p', kBinPut = 'q';
inline constexpr uint8_t kLongBinPut = 'r', kSetItem = 's', kTuple = 't', kEmptyTuple = ')', kSetItems = 'u';
inline constexpr uint8_t kBinFloat = 'G';
// Protocol 2.
inline constexpr uint8_t kProto = 0x80, kNewObj = 0x81, kExt1 = 0x82, kExt2 = 0x83, kExt4 = 0x84;
inline constexpr uint8_t kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87, kNewTrue = 0x88, kNewFalse = 0x89;
inline constexpr uint8_t kLong1 = 0x8a, kLong4 = 0x8b;
// Protocol 3.
inline constexpr uint8_t kBinBytes = 'B', kShortBinBytes = 'C';
// Protocol 4.
inline constexpr uint8_t kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e, kEmptySet = 0x8f;
inline constexpr uint8_t kAddItems = 0x90, kFrozenSet = 0x91, kNewObjEx = 0x92, kStackGlobal = 0x93;
inline constexpr uint8_t kMemoize = 0x94, kFrame = 0x95;
// Protocol 5.
inline constexpr uint8_t kByteArray8 = 0x96, kNextBuffer = 0x97, kReadonlyBuffer = 0x98;

/// "GLOBAL ('c')", "PROTO (0x80)", "unknown opcode (0xff)": the opcode's pickletools name and its byte.
std::string Describe(uint8_t opcode);

}  // namespace strata::pickle_op
