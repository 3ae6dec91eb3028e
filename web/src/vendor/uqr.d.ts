// The QR encoder the page loads from /developers/vendor/uqr.js: web/build.js copies the `uqr`
// package's ES module there (the page has no bundler and no import map, which the CSP would refuse
// inline), so its types are the package's.
export { encode } from 'uqr';
