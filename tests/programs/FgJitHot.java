// SPDX-License-Identifier: LGPL-2.1-or-later
// A Java workload with one hot method the JIT compiles: test_jit_java.py runs
// it with -XX:+PreserveFramePointer (fgd unwinds with frame pointers) and
// keeps the method from being inlined into main, then asks for a perf map
// with jcmd PID Compiler.perfmap. Prints "ready" once running.
public class FgJitHot {
    static volatile long sink;

    static long fgdJitJavaHotMethod(long seed) {
        long x = seed;
        for (int i = 0; i < 200_000; i++) {
            x = x * 6364136223846793005L + i;
        }
        return x;
    }

    public static void main(String[] args) {
        System.out.println("ready");
        System.out.flush();
        long s = 0;
        for (;;) {
            s += fgdJitJavaHotMethod(s);
            sink = s;
        }
    }
}
