# Generates a C++ source holding every storage/migrations/NNNN_name.sql, in order, as
# det::storage::kMigrations. Run at build time so an edited SQL file rebuilds the binary.
file(GLOB files "${SRC_DIR}/[0-9][0-9][0-9][0-9]_*.sql")
list(SORT files)
set(body "")
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  string(SUBSTRING "${name}" 0 4 number)
  math(EXPR version "${number}")
  file(READ "${f}" sql)
  string(APPEND body "    {${version}, \"${name}\", R\"det_sql(${sql})det_sql\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from storage/migrations/*.sql by storage/embed_migrations.cmake.\n#include \"storage/migrations.h\"\n\nnamespace det::storage {\nconst std::vector<Migration> kMigrations = {\n${body}};\n}  // namespace det::storage\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
