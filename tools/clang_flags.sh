# Sourced by the check scripts: clang_flags CC [ARGS...] prints what setup.py
# adds when it compiles with clang (CLANG_ARGS, and CLANG_FP_EXCEPTIONS where
# that compiler and target take it without a warning), read from setup.py so
# that the checks build what pip builds; nothing for another compiler.
clang_flags() {
    # not `| grep -q`: under pipefail, grep's early exit can kill the
    # compiler with SIGPIPE and the pipeline would say "not clang"
    local defines args fp
    defines=$("$@" -dM -E -x c /dev/null 2>/dev/null) || return 0
    [[ $defines == *__clang__* ]] || return 0
    read -r args fp < <(python3 -c 'import ast
tree = ast.parse(open("setup.py").read())
value = {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
         if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("CLANG_ARGS", "CLANG_FP_EXCEPTIONS")}
print(",".join(value["CLANG_ARGS"]), value["CLANG_FP_EXCEPTIONS"])')
    echo "${args//,/ }$(echo 'int f(float a, float b) { return a < b; }' |
        "$@" -x c -c - -o /dev/null -Werror "$fp" 2>/dev/null && echo " $fp")"
}
