# Generates a C++ source defining `extern const char* const det::generated::${NAME}[]`: the text of
# ${SRC} in parts of at most 30,000 bytes (C++ compilers need only take string literals of 65,536),
# then nullptr; the reader joins them. Run at build time (add_custom_command) so an edited file
# rebuilds what embeds it.
file(READ "${SRC}" text)
string(FIND "${text}" ")det_text\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${SRC} contains the raw-string delimiter )det_text\"")
endif()
string(LENGTH "${text}" size)
set(parts "")
set(at 0)
while(at LESS size)
  string(SUBSTRING "${text}" ${at} 30000 part)
  string(APPEND parts "    R\"det_text(${part})det_text\",\n")
  math(EXPR at "${at} + 30000")
endwhile()
file(WRITE "${OUT}.tmp" "// Generated from ${SRC} by cmake/embed_text.cmake.\nnamespace det::generated {\nextern const char* const ${NAME}[];\nconst char* const ${NAME}[] = {\n${parts}    nullptr};\n}  // namespace det::generated\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
