var NAVTREE =
[
  [ "fixture", "index.html", [
    [ "A page", "page.html#section", null ],
    [ "Gone", "page.html#nowhere", null ], // planted
  ] ]
];
