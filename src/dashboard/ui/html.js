// Preact with htm: components written as tagged templates, so the browser runs them as they are.
import { h, render } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
export { render };
export { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
