// The part of htm's preact/standalone.module.js (static/preact-htm.js) the
// dashboard uses, typed loosely: markup is checked by the browser tests, the
// modules' own logic by tsc.
export declare const html: (strings: TemplateStringsArray, ...values: any[]) => any;
export declare function render(vnode: any, parent: Element): void;
export declare function useState<S>(initial: S | (() => S)): [S, (v: S | ((prev: S) => S)) => void];
export declare function useEffect(effect: () => void | (() => void), deps?: readonly any[]): void;
export declare function useLayoutEffect(effect: () => void | (() => void), deps?: readonly any[]): void;
export declare function useRef<T>(initial: T): { current: T };
export declare function useMemo<T>(factory: () => T, deps: readonly any[]): T;
export declare function useCallback<T extends (...args: any[]) => any>(fn: T, deps: readonly any[]): T;
