/* The site opened from a file (file://): Chromium refuses to start a Web Worker from a
   file's URL, so the search worker starts from a blob of its own source, which the build
   writes into this script (docs/hooks/offline_search.py). Served over http(s), nothing
   changes. */
(function () {
  "use strict";
  if (location.protocol !== "file:" || typeof window.Worker !== "function") {
    return;
  }
  var source = __SEARCH_WORKER_SOURCE__;
  var NativeWorker = window.Worker;
  function FileWorker(url, options) {
    if (String(url).indexOf("/workers/search.") !== -1) {
      var blob = new Blob([source], { type: "text/javascript" });
      url = URL.createObjectURL(blob);
    }
    return new NativeWorker(url, options);
  }
  FileWorker.prototype = NativeWorker.prototype;
  window.Worker = FileWorker;
})();
