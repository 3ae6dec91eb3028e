/** A screen of the page: its root element and the heading that receives focus when it opens. */
export interface View {
  readonly element: HTMLElement;
  readonly heading: HTMLElement;
}
