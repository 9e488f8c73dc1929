'use strict';
/**
 * The SDK's sources are ES modules that import each other as `./x.js` (NodeNext), while Jest runs the `.ts`
 * files: a relative `.js` import that does not resolve is tried as `.ts`. Only failed resolutions are retried,
 * so nothing that resolves today changes.
 */
module.exports = (request, options) => {
  try {
    return options.defaultResolver(request, options);
  } catch (e) {
    if (/^\.{1,2}\/.*\.js$/.test(request)) return options.defaultResolver(`${request.slice(0, -3)}.ts`, options);
    throw e;
  }
};
