#pragma once
// UTF-8 decoding and the code points a reader cannot see. Names come from users and spec files; a
// pasted "llama3-8b\u200b" or a BOM looks like the name around it, so the output boundary shows
// such characters escaped and "did you mean" matches the name without them.
#include <cstddef>
#include <string_view>

namespace napkin {

// Length of the valid UTF-8 sequence at text[i] (2 to 4 bytes) and its code point in `cp`, or 0
// when it is not one (ASCII, a stray continuation byte, an overlong form, a surrogate, above
// U+10FFFF, cut short).
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& cp);

// A non-ASCII code point that draws nothing or moves text about: C1 controls (U+0080–U+009F), the
// soft hyphen, zero-width spaces and joiners and the marks of U+200B–U+200F, the line and
// paragraph separators, bidi embeddings, overrides and isolates, the invisible operators of
// U+2060–U+206F, the Arabic letter mark, the Mongolian vowel separator and free variation
// selectors, Hangul fillers, variation selectors, the BOM, interlinear annotation marks and the
// tag characters (Unicode's Default_Ignorable_Code_Point, less the unassigned, plus Cc and the
// separators).
bool invisible_code_point(char32_t cp);

}  // namespace napkin
