# Generates a C++ source defining `extern const char det::generated::${NAME}[]` with the text of
# ${SRC}. Run at build time (add_custom_command) so an edited file rebuilds what embeds it.
file(READ "${SRC}" text)
string(FIND "${text}" ")det_text\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${SRC} contains the raw-string delimiter )det_text\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${SRC} by cmake/embed_text.cmake.\nnamespace det::generated {\nextern const char ${NAME}[];\nconst char ${NAME}[] = R\"det_text(${text})det_text\";\n}  // namespace det::generated\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
